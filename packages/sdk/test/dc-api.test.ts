import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  type DcApiRequest,
  DcApiResponseError,
  digitalCredentialsSupported,
  presentWithDigitalCredentials,
} from '../src/index'

const dcApi: DcApiRequest = {
  requests: [
    { protocol: 'openid4vp-v1-signed', data: { request: 'eyJ.signed.jws' } },
    { protocol: 'openid4vp-v1-unsigned', data: { nonce: 'n-1', response_mode: 'dc_api' } },
  ],
  responseUri: 'https://verifier.example/dc-api/req_1',
}

/** navigator.credentials is the browser's: these stand in for it, as a page would see them. */
function browser(
  get: (options: Record<string, unknown>) => Promise<unknown>,
  allows?: (p: string) => boolean,
) {
  const calls: Record<string, unknown>[] = []
  vi.stubGlobal('window', {})
  vi.stubGlobal('DigitalCredential', allows ? { userAgentAllowsProtocol: allows } : {})
  vi.stubGlobal('navigator', {
    credentials: {
      get: (options: Record<string, unknown>) => {
        calls.push(options)
        return get(options)
      },
    },
  })
  return calls
}

/** The response endpoint: records the posted bodies, answers `status` with `body`. */
function endpoint(status = 200, body = '{}') {
  const posted: { url: string; body: unknown; contentType: string | null }[] = []
  const fetch = (async (url: string, init: RequestInit) => {
    posted.push({
      url,
      body: JSON.parse(String(init.body)),
      contentType: new Headers(init.headers).get('content-type'),
    })
    return new Response(body, { status })
  }) as typeof globalThis.fetch
  return { posted, fetch }
}

const domError = (name: string) => Object.assign(new Error(name), { name })

describe('presentWithDigitalCredentials (W3C Digital Credentials API)', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  it('in Node (no window, no DigitalCredential) the API is unavailable: the fallback runs, nothing is posted', async () => {
    const fallback = vi.fn()
    const { posted, fetch } = endpoint()
    expect(digitalCredentialsSupported()).toBe(false)
    await expect(presentWithDigitalCredentials({ dcApi, fallback, fetch })).resolves.toStrictEqual({
      kind: 'fallback',
      reason: 'unavailable',
    })
    expect(fallback).toHaveBeenCalledWith('unavailable')
    expect(posted).toStrictEqual([])
  })

  it('hands the requests to navigator.credentials.get as they are and posts the answer as JSON; a JSON string `data` (older browsers) is posted as the object', async () => {
    const answer = { vp_token: { pid: ['sd-jwt~kb'] } }
    const calls = browser(async () => ({ protocol: 'openid4vp-v1-unsigned', data: JSON.stringify(answer) }))
    const { posted, fetch } = endpoint()
    const fallback = vi.fn()
    const signal = new AbortController().signal
    expect(digitalCredentialsSupported()).toBe(true)
    const outcome = await presentWithDigitalCredentials({ dcApi, fallback, fetch, signal })
    expect(outcome).toStrictEqual({ kind: 'answered', protocol: 'openid4vp-v1-unsigned' })
    expect(calls).toStrictEqual([{ mediation: 'required', digital: { requests: dcApi.requests }, signal }])
    expect(posted).toStrictEqual([
      {
        url: dcApi.responseUri,
        body: { protocol: 'openid4vp-v1-unsigned', data: answer },
        contentType: 'application/json',
      },
    ])
    expect(fallback).not.toHaveBeenCalled()
  })

  it('offers only the protocols the browser allows; none allowed, or a NotSupportedError, falls back', async () => {
    const calls = browser(
      async () => ({ protocol: 'openid4vp-v1-signed', data: { response: 'jwe' } }),
      (protocol) => protocol === 'openid4vp-v1-signed',
    )
    const { fetch } = endpoint()
    await presentWithDigitalCredentials({ dcApi, fallback: vi.fn(), fetch })
    expect(calls[0]).toMatchObject({ digital: { requests: [dcApi.requests[0]] } })

    browser(
      async () => null,
      () => false,
    )
    const fallback = vi.fn()
    await expect(presentWithDigitalCredentials({ dcApi, fallback, fetch })).resolves.toStrictEqual({
      kind: 'fallback',
      reason: 'not-supported',
    })
    browser(() => Promise.reject(domError('NotSupportedError')))
    await expect(presentWithDigitalCredentials({ dcApi, fallback, fetch })).resolves.toStrictEqual({
      kind: 'fallback',
      reason: 'not-supported',
    })
    expect(fallback.mock.calls).toStrictEqual([['not-supported'], ['not-supported']])
  })

  it('a closed picker (NotAllowedError) or an abort rejects with the browser’s error; no fallback, no post', async () => {
    const { posted, fetch } = endpoint()
    const fallback = vi.fn()
    for (const name of ['NotAllowedError', 'AbortError']) {
      browser(() => Promise.reject(domError(name)))
      await expect(presentWithDigitalCredentials({ dcApi, fallback, fetch })).rejects.toMatchObject({ name })
    }
    expect(fallback).not.toHaveBeenCalled()
    expect(posted).toStrictEqual([])
  })

  it('an answer for a protocol that was not requested, or without an object as data, is not posted', async () => {
    const { posted, fetch } = endpoint()
    browser(async () => ({ protocol: 'org-iso-mdoc', data: {} }))
    await expect(presentWithDigitalCredentials({ dcApi, fallback: vi.fn(), fetch })).rejects.toThrow(
      /no requested protocol: org-iso-mdoc/,
    )
    browser(async () => ({ protocol: 'openid4vp-v1-unsigned', data: 'not json' }))
    await expect(presentWithDigitalCredentials({ dcApi, fallback: vi.fn(), fetch })).rejects.toThrow(
      TypeError,
    )
    expect(posted).toStrictEqual([])
  })

  it('a refused answer rejects with a DcApiResponseError carrying the OAuth error; a non-JSON failure with http_<status>', async () => {
    browser(async () => ({ protocol: 'openid4vp-v1-unsigned', data: { vp_token: {} } }))
    const refused = endpoint(400, JSON.stringify({ error: 'invalid_request', error_description: 'aud' }))
    const error = await presentWithDigitalCredentials({
      dcApi,
      fallback: vi.fn(),
      fetch: refused.fetch,
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DcApiResponseError)
    expect(error).toMatchObject({ status: 400, error: 'invalid_request', errorDescription: 'aud' })
    const broken = endpoint(502, '<html>Bad gateway</html>')
    await expect(
      presentWithDigitalCredentials({ dcApi, fallback: vi.fn(), fetch: broken.fetch }),
    ).rejects.toMatchObject({ status: 502, error: 'http_502', errorDescription: undefined })
  })
})
