import { MAX_JSON_DEPTH } from '@credential-service/core-domain'
import { testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { base64url, CompactEncrypt, importJWK, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllInOneWorld } from './harness'
import { answer, issue, requestPresentation, VCT } from './session-fixtures'

// Issue 19 item 6a (checklist S-123): a vp_token nested 5,000 arrays deep was a 500 (a stack
// overflow in String() of the nested value) and left the session pending. Every JSON value the
// wallet sends is now depth-checked before it is parsed or walked: 400 invalid_request, and the
// session fails with the reason.

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
const tooDeep = `nests deeper than ${MAX_JSON_DEPTH} levels`

describe.each(testDatabases())('issue 19: deeply nested wallet JSON on $name', (testDatabase) => {
  let app: FastifyInstance
  let auth: Record<string, string>
  let tenant = ''

  beforeAll(async () => {
    const started = await startAllInOneWorld(testDatabase, 'presentation')
    app = started.app
    await app.ready()
    tenant = started.tenants.a.id
    auth = started.tenants.a.auth
    const encrypted = await app.inject({
      method: 'POST',
      url: '/api/presentations',
      headers: auth,
      payload: {
        id: 'ask-jwe',
        keyChainId: 'keys',
        responseMode: 'direct_post.jwt',
        dcqlQuery: { credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [VCT] } }] },
      },
    })
    expect(encrypted.statusCode, encrypted.body).toBe(201)
  })
  afterAll(() => app.close())

  const respond = (presentation: Awaited<ReturnType<typeof requestPresentation>>, form: object) =>
    app.inject({
      method: 'POST',
      url: new URL(presentation.created.requestUri).pathname.replace('/requests/', '/responses/'),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ state: presentation.request.state, ...form }).toString(),
    })

  const session = async (id: string) =>
    (await app.inject({ url: `/api/sessions/${id}`, headers: auth })).json() as Record<string, unknown>

  /** The wallet's answer is invalid_request with `reason`, and the session failed with it. */
  async function expectRefused(
    response: Awaited<ReturnType<typeof respond>>,
    sessionId: string,
    reason: string,
  ) {
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json()).toStrictEqual({ error: 'invalid_request', error_description: reason })
    expect(await session(sessionId)).toMatchObject({ status: 'failed', failureReason: reason })
  }

  it.each([5_000, 100_000])(
    'S-123, OpenID4VP §8.1: a vp_token nested %i deep is invalid_request; the session fails with the reason',
    async (depth) => {
      const inArray = await requestPresentation(app, auth)
      const response = await respond(inArray, { vp_token: `{"pid":[${nested(depth)}]}` })
      await expectRefused(response, inArray.created.sessionId, `vp_token ${tooDeep}`)

      const bare = await requestPresentation(app, auth)
      await expectRefused(
        await respond(bare, { vp_token: nested(depth) }),
        bare.created.sessionId,
        `vp_token ${tooDeep}`,
      )
    },
  )

  it('OpenID4VP §8.1: a vp_token that is not JSON, or a presentation that is not a string, fails the session', async () => {
    const garbled = await requestPresentation(app, auth)
    await expectRefused(
      await respond(garbled, { vp_token: '{"pid":[' }),
      garbled.created.sessionId,
      'vp_token is not JSON',
    )
    const object = await requestPresentation(app, auth)
    await expectRefused(
      await respond(object, { vp_token: JSON.stringify({ pid: [[['x']]] }) }),
      object.created.sessionId,
      'vp_token.pid holds a presentation that is not a string',
    )
  })

  it('S-123, RFC 9901 §4.2: a disclosure nested 100,000 deep inside a real SD-JWT is refused before the library walks it', async () => {
    const issued = await issue(app, auth)
    // The genuine presentation verifies, so the refusal below is the depth alone.
    const genuine = await requestPresentation(app, auth)
    expect((await answer(app, genuine, issued)).statusCode).toBe(200)

    const hostile = await requestPresentation(app, auth)
    const disclosure = base64url.encode(`["salt","deep",${nested(100_000)}]`)
    const [jwt, ...rest] = issued.credential.split('~')
    const vp = [jwt, disclosure, ...rest].join('~')
    await expectRefused(
      await respond(hostile, { vp_token: JSON.stringify({ pid: [vp] }) }),
      hostile.created.sessionId,
      `the SD-JWT holds JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
    )
  })

  it('S-123, OpenID4VP §8.3: a direct_post.jwt response whose payload nests 100,000 deep fails the session', async () => {
    const presentation = await requestPresentation(app, auth, { presentationConfigId: 'ask-jwe' })
    const key = presentation.request.client_metadata.jwks.keys[0] as JWK
    const deep = `{"state":"x","vp_token":{"pid":[${nested(100_000)}]}}`
    const response = await respond(presentation, {
      response: await new CompactEncrypt(new TextEncoder().encode(deep))
        .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: key.kid as string })
        .encrypt(await importJWK(key, 'ECDH-ES')),
    })
    await expectRefused(response, presentation.created.sessionId, `the decrypted response ${tooDeep}`)
  })

  it('S-123, OpenID4VCI 1.0 §8.3.1: a credential request body nested 100,000 deep is invalid_credential_request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: `/issuers/${tenant}/credential`,
      headers: { 'content-type': 'application/json' },
      payload: `{"credential_configuration_id":"pid","proofs":{"jwt":${nested(100_000)}}}`,
    })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.json()).toStrictEqual({
      error: 'invalid_credential_request',
      error_description: `body ${tooDeep}`,
    })
  })
})
