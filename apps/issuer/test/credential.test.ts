import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { proofJwt, readyToRequest, requestCredential, startIssuerWorld, type World } from './world'

// routes/credential.ts: the credential and deferred credential endpoints (OpenID4VCI 1.0 §8, §9),
// the issuer served alone over the `issuance` world.
describe('issuer POST /issuers/{tenant}/credential and /deferred-credential', () => {
  let world: World
  beforeAll(async () => {
    world = await startIssuerWorld()
  })
  afterAll(() => world.close())

  describe('happy', () => {
    it('§8.3: one proof, one SD-JWT VC and a notification id, not cached', async () => {
      const { accessToken, body } = await readyToRequest(world, 'a')
      const response = await requestCredential(world, world.tenants.a.id, accessToken, body)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.headers['cache-control']).toBe('no-store')
      const answer = response.json()
      expect(answer.credentials).toHaveLength(1)
      expect(answer.credentials[0].credential).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+~/)
      expect(answer.notification_id).toEqual(expect.any(String))
    })

    it('§8.2: a batch of two proofs of the world configuration (batchSize 2) gets two credentials', async () => {
      const { accessToken, body } = await readyToRequest(world, 'a', 'pid', 2)
      const response = await requestCredential(world, world.tenants.a.id, accessToken, body)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().credentials).toHaveLength(2)
    })
  })

  describe('error', () => {
    it('RFC 6750 §3: no access token is 401 invalid_token with a challenge', async () => {
      const { body } = await readyToRequest(world, 'a')
      const response = await requestCredential(world, world.tenants.a.id, undefined, body)
      expect(response.statusCode).toBe(401)
      expect(response.headers['www-authenticate']).toEqual(expect.any(String))
      expect(response.json()).toMatchObject({ error: 'invalid_token' })
    })

    it('I-60 §8.3.1.2: a body that is not JSON is invalid_credential_request', async () => {
      const { accessToken } = await readyToRequest(world, 'a')
      const response = await requestCredential(world, world.tenants.a.id, accessToken, '{"credential_')
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_credential_request' })
    })

    it('§8.3.1.2: a proof with a nonce the issuer never gave is invalid_nonce', async () => {
      const { accessToken, body } = await readyToRequest(world, 'a')
      const forged = await proofJwt(world.tenants.a.issuer, 'a-nonce-of-nobody')
      const response = await requestCredential(world, world.tenants.a.id, accessToken, {
        ...body,
        proofs: { jwt: [forged] },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_nonce' })
    })

    it('§8.3.1.2: a configuration the token does not cover is insufficient_scope (403)', async () => {
      const { accessToken, body } = await readyToRequest(world, 'a')
      const response = await requestCredential(world, world.tenants.a.id, accessToken, {
        ...body,
        credential_configuration_id: 'pid-status',
      })
      expect(response.statusCode).toBe(403)
      expect(response.json()).toMatchObject({ error: 'insufficient_scope' })
    })

    it('§9.3: an unknown transaction_id at the deferred endpoint is invalid_transaction_id', async () => {
      const { accessToken } = await readyToRequest(world, 'a')
      const response = await world.app.inject({
        method: 'POST',
        url: `/issuers/${world.tenants.a.id}/deferred-credential`,
        headers: { authorization: `Bearer ${accessToken}` },
        payload: { transaction_id: 'no-such-transaction' },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_transaction_id' })
    })
  })

  describe('security', () => {
    it("tenant B does not take tenant A's access token; A's request still works after", async () => {
      const { accessToken, body } = await readyToRequest(world, 'a')
      const atB = await requestCredential(world, world.tenants.b.id, accessToken, body)
      expect(atB.statusCode).toBe(401)
      expect(atB.json()).toMatchObject({ error: 'invalid_token' })
      const atA = await requestCredential(world, world.tenants.a.id, accessToken, body)
      expect(atA.statusCode, atA.body).toBe(200)
    })

    it('a configuration is issued once per offer: the second request is credential_request_denied', async () => {
      const { accessToken, body } = await readyToRequest(world, 'a')
      expect((await requestCredential(world, world.tenants.a.id, accessToken, body)).statusCode).toBe(200)
      const again = await readyToRequest(world, 'a')
      const second = await requestCredential(world, world.tenants.a.id, accessToken, again.body)
      expect(second.statusCode).toBe(400)
      expect(second.json()).toMatchObject({ error: 'credential_request_denied' })
    })
  })
})
