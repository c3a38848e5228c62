import { request as httpRequest } from 'node:http'
import { testDatabases } from '@credential-service/db-schema/testing'
import { Encoder, Tag } from 'cbor-x'
import type { FastifyInstance } from 'fastify'
import { base64url, decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { issueOverHttp, mdocDeviceResponse } from './wallet'

// Issue 27 item 5 (checklist S-128, S-123): a CBOR bignum of a few hundred KB posted as an mdoc
// vp_token decoded in quadratic time and held the whole process for minutes. The verifier now
// refuses it before decoding, in milliseconds, and keeps answering meanwhile.

const DOCTYPE = 'org.iso.18013.5.1.mDL'
const NS = 'org.iso.18013.5.1'
// The wallet's CBOR settings (ISO 18013-5: plain byte strings, maps kept as maps).
const cbor = new Encoder({
  useRecords: false,
  tagUint8Array: false,
  mapsAsObjects: false,
  variableMapSize: true,
})

/** POSTs a form over node:http and calls `sent` once the whole body is written to the socket. */
function postForm(url: string, form: Record<string, string>, sent: () => void) {
  return new Promise<{ status: number; cacheControl: string | undefined; body: string }>(
    (resolve, reject) => {
      const request = httpRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      request.on('error', reject)
      request.on('finish', sent)
      request.on('response', (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          body += chunk
        })
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            cacheControl: response.headers['cache-control'],
            body,
          }),
        )
      })
      request.end(new URLSearchParams(form).toString())
    },
  )
}

describe.each(testDatabases())('hostile CBOR at the verifier response_uri on $name', (testDatabase) => {
  let app: FastifyInstance
  let base: string
  let admin: Record<string, string>

  const post = async (url: string, body: unknown) => {
    const response = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin },
      body: JSON.stringify(body),
    })
    expect(response.status, await response.clone().text()).toBe(201)
    // biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
    return (await response.json()) as any
  }

  beforeAll(async () => {
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    const started = await startAllInOneWorld(testDatabase, 'presentation', base)
    app = started.app
    await app.listen({ port, host: '127.0.0.1' })
    admin = started.tenants.a.auth
    await post('/api/credentials', {
      id: 'mdl',
      config: { format: 'mso_mdoc', docType: DOCTYPE },
      keyChainId: 'keys',
      fields: [{ path: ['family_name'], type: 'string', namespace: NS, mandatory: true }],
    })
    await post('/api/presentations', {
      id: 'mdl-plain',
      keyChainId: 'keys',
      responseMode: 'direct_post',
      dcqlQuery: { credentials: [{ id: 'mdl', format: 'mso_mdoc', meta: { doctype_value: DOCTYPE } }] },
    })
  })
  afterAll(() => app.close())

  /** A fresh presentation request and what the wallet reads from its request object. */
  async function presentationRequest() {
    const created = await post('/api/presentation-requests', { presentationConfigId: 'mdl-plain' })
    const claims = decodeJwt(await (await fetch(created.requestUri)).text()) as Record<string, string>
    return { sessionId: created.sessionId as string, claims }
  }

  const respond = (claims: Record<string, string>, vp: string) =>
    fetch(claims.response_uri as string, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ vp_token: JSON.stringify({ mdl: [vp] }), state: claims.state as string }),
    })

  const session = async (id: string) =>
    (await (await fetch(`${base}/api/sessions/${id}`, { headers: admin })).json()) as Record<string, unknown>

  it('S-128 / ISO 18013-5 §8.3.2.1.2.2: a 400 KB bignum (tag 2) in a DeviceResponse is refused in milliseconds; /healthz answers meanwhile', async () => {
    const issued = await issueOverHttp({
      apiBase: base,
      auth: admin,
      configurationId: 'mdl',
      claims: { [NS]: { family_name: 'Mustermann' } },
    })
    // The same wallet's genuine DeviceResponse verifies: the guard lets real mdocs through.
    const genuine = await presentationRequest()
    const binding = {
      ...issued,
      docType: DOCTYPE,
      clientId: genuine.claims.client_id as string,
      nonce: genuine.claims.nonce as string,
      responseUri: genuine.claims.response_uri as string,
    }
    const valid = await mdocDeviceResponse(binding)
    const accepted = await respond(genuine.claims, valid)
    expect(accepted.status, await accepted.clone().text()).toBe(200)
    expect(await session(genuine.sessionId)).toMatchObject({ status: 'verified' })

    // The hostile one: that DeviceResponse with `status` a 400 KB bignum (cbor-x needs minutes for it).
    const hostile = await presentationRequest()
    const deviceResponse = cbor.decode(base64url.decode(valid)) as Map<string, unknown>
    deviceResponse.set('status', new Tag(new Uint8Array(400 * 1024).fill(0xa5), 2))
    const vp = base64url.encode(cbor.encode(deviceResponse))
    // /healthz is asked once the hostile body is sent: an event loop busy decoding would hold it too.
    let health: Promise<{ status: number; ms: number }> | undefined
    const started = performance.now()
    const refused = await postForm(
      hostile.claims.response_uri as string,
      { vp_token: JSON.stringify({ mdl: [vp] }), state: hostile.claims.state as string },
      () => {
        const asked = performance.now()
        health = fetch(`${base}/healthz`).then((r) => ({ status: r.status, ms: performance.now() - asked }))
      },
    )
    const refusedMs = performance.now() - started
    const reason =
      'the mdoc presentation is refused before decoding: a bignum (tag 2), which no mdoc or COSE structure uses'
    expect(refused.status).toBe(400)
    expect(refused.cacheControl).toBe('no-store')
    expect(JSON.parse(refused.body)).toStrictEqual({ error: 'invalid_request', error_description: reason })
    expect(refusedMs).toBeLessThan(500)
    const answered = await health
    expect(answered?.status).toBe(200)
    expect(answered?.ms).toBeLessThan(500)
    expect(await session(hostile.sessionId)).toMatchObject({ status: 'failed', failureReason: reason })
  })

  it('S-123: a vp_token nested 10,000 deep, and one that is not base64url, end the session with the reason', async () => {
    const deep = await presentationRequest()
    const nested = base64url.encode(new Uint8Array([...new Array(10_000).fill(0x81), 0]))
    const response = await respond(deep.claims, nested)
    const reason = 'the mdoc presentation is refused before decoding: nesting deeper than 32 levels'
    expect(response.status).toBe(400)
    expect(await response.json()).toStrictEqual({ error: 'invalid_request', error_description: reason })
    expect(await session(deep.sessionId)).toMatchObject({ status: 'failed', failureReason: reason })

    const garbled = await presentationRequest()
    const notBase64url = await respond(garbled.claims, 'a+b/c=')
    expect(notBase64url.status).toBe(400)
    expect(await session(garbled.sessionId)).toMatchObject({
      status: 'failed',
      failureReason: 'the presentation is not base64url',
    })
  })
})
