import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postForm, startIssuerWorld, type World } from './world'

const REDIRECT = 'https://wallet.example.com/cb'

// routes/authorization.ts: pushed authorization requests, the authorization endpoint and the login
// callback (OpenID4VCI 1.0 §5, RFC 9126), the issuer served alone over the `issuance` world. The
// whole authorization code flow is driven by apps/all-in-one/test/authorization-code-flow.test.ts.
describe('issuer /par, /authorize and /authorize/callback', () => {
  let world: World
  beforeAll(async () => {
    world = await startIssuerWorld()
  })
  afterAll(() => world.close())

  /** The issuer_state of an authorization code offer of `pid` made by `tenant` (claims known). */
  const issuerState = async (tenant: 'a' | 'b' = 'a') => {
    const response = await world.management.inject({
      method: 'POST',
      url: '/api/offers',
      headers: world.tenants[tenant].auth,
      payload: {
        credentialConfigurationIds: ['pid'],
        grant: 'authorization_code',
        claims: { pid: { given_name: 'Erika', family_name: 'Mustermann' } },
      },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().credentialOffer.grants.authorization_code.issuer_state as string
  }
  const pushedRequest = (extra: Record<string, string> = {}) => {
    const verifier = randomBytes(32).toString('base64url')
    return {
      response_type: 'code',
      client_id: 'wallet',
      redirect_uri: REDIRECT,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      authorization_details: JSON.stringify([
        { type: 'openid_credential', credential_configuration_id: 'pid' },
      ]),
      ...extra,
    }
  }
  const push = (tenant: string, form: Record<string, string>) =>
    postForm(world.app, `/issuers/${tenant}/par`, form)
  /** A pushed request of tenant A's wallet with the issuer_state of one of its offers. */
  const pushForA = async () =>
    push(world.tenants.a.id, pushedRequest({ issuer_state: await issuerState('a'), state: 'wallet-state' }))
  const authorize = (tenant: string, requestUri: string) =>
    world.app.inject({
      url: `/issuers/${tenant}/authorize?${new URLSearchParams({ client_id: 'wallet', request_uri: requestUri })}`,
    })

  describe('happy', () => {
    it('RFC 9126 §2.2: a pushed request gets a request_uri and its lifetime, not cached', async () => {
      const response = await pushForA()
      expect(response.statusCode, response.body).toBe(201)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.json()).toStrictEqual({
        request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/),
        expires_in: expect.any(Number),
      })
    })

    it('RFC 9126 §4: the authorization endpoint takes the request_uri and redirects (303), not cached', async () => {
      const { a } = world.tenants
      const { request_uri } = (await pushForA()).json()
      const response = await authorize(a.id, request_uri)
      expect(response.statusCode).toBe(303)
      expect(response.headers['cache-control']).toBe('no-store')
      // The offer's claims are known: no login, straight back to the wallet with a code (RFC 9207 iss).
      const location = new URL(response.headers.location as string)
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
      expect(Object.fromEntries(location.searchParams)).toStrictEqual({
        code: expect.any(String),
        state: 'wallet-state',
        iss: a.issuer,
      })
    })
  })

  describe('error', () => {
    it('I-30 RFC 9126 §2.1: GET /par is 405 with Allow: POST', async () => {
      const response = await world.app.inject({ url: `/issuers/${world.tenants.a.id}/par` })
      expect(response.statusCode).toBe(405)
      expect(response.headers.allow).toBe('POST')
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('I-30: a pushed request that is not a form is invalid_request', async () => {
      const response = await world.app.inject({
        method: 'POST',
        url: `/issuers/${world.tenants.a.id}/par`,
        payload: pushedRequest(),
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('I-34 RFC 7636 §4.4.1: a pushed request without PKCE is invalid_request', async () => {
      const { code_challenge: _, code_challenge_method: __, ...withoutPkce } = pushedRequest()
      const response = await push(world.tenants.a.id, withoutPkce)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('I-35: authorization_details naming an unknown configuration is refused', async () => {
      const response = await push(
        world.tenants.a.id,
        pushedRequest({
          authorization_details: JSON.stringify([
            { type: 'openid_credential', credential_configuration_id: 'nope' },
          ]),
        }),
      )
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('an unknown request_uri at the authorization endpoint is refused', async () => {
      const response = await authorize(world.tenants.a.id, 'urn:ietf:params:oauth:request_uri:nothing')
      expect(response.statusCode).toBe(400)
      expect(response.headers.location).toBeUndefined()
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('a callback with a state the issuer never gave is refused', async () => {
      const response = await world.app.inject({
        url: `/issuers/${world.tenants.a.id}/authorize/callback?state=made-up&code=x`,
      })
      expect(response.statusCode).toBe(400)
      expect(response.headers.location).toBeUndefined()
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('an unknown tenant has no pushed request endpoint: 404', async () => {
      const response = await push('nobody-here', pushedRequest())
      expect(response.statusCode).toBe(404)
    })
  })

  describe('security', () => {
    it("tenant B does not take tenant A's request_uri", async () => {
      const { a, b } = world.tenants
      const { request_uri } = (await pushForA()).json()
      const atB = await authorize(b.id, request_uri)
      const atA = await authorize(a.id, request_uri)
      expect(atB.statusCode).toBe(400)
      expect(atB.headers.location).toBeUndefined()
      expect(atB.json()).toMatchObject({ error: 'invalid_request' })
      // Refused at B, the request is not spent: A still answers it with a code.
      expect(atA.statusCode).toBe(303)
      expect(new URL(atA.headers.location as string).searchParams.get('code')).toEqual(expect.any(String))
    })
  })
})
