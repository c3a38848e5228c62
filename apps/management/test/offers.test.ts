import { startWorld, type World } from '@credential-service/management/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const PROBLEM = /^application\/problem\+json/

// routes/offers.ts: credential offers and presentation requests (spec §4), the management API
// alone over the `presentation` world (each tenant issues `pid` and asks for it with `ask`).
describe('management POST /api/offers and /api/presentation-requests', () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld('presentation')
  })
  afterAll(() => world.close())

  const post = (url: string, payload: object, headers: Record<string, string> = world.tenants.a.auth) =>
    world.app.inject({ method: 'POST', url, headers, payload })
  const offer = {
    credentialConfigurationIds: ['pid'],
    claims: { pid: { given_name: 'Erika', age_over_18: true } },
  }

  describe('happy', () => {
    it('OpenID4VCI 1.0 §4.1.1: an offer by value names the tenant issuer and a pre-authorized code', async () => {
      const response = await post('/api/offers', { ...offer, byReference: false })
      expect(response.statusCode, response.body).toBe(201)
      const created = response.json()
      expect(created.sessionId).toMatch(/^ses_/)
      expect(created.credentialOffer).toMatchObject({
        credential_issuer: world.tenants.a.issuer,
        credential_configuration_ids: ['pid'],
        grants: {
          'urn:ietf:params:oauth:grant-type:pre-authorized_code': {
            'pre-authorized_code': expect.any(String),
          },
        },
      })
    })

    it('OpenID4VCI 1.0 §4.1.3: an offer by reference is served from the tenant issuer', async () => {
      const response = await post('/api/offers', { ...offer, byReference: true })
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json().credentialOfferUri.startsWith(`${world.tenants.a.issuer}/offers/`)).toBe(true)
    })

    it('OpenID4VP 1.0 §5.10: a presentation request points at the tenant verifier', async () => {
      const response = await post('/api/presentation-requests', { presentationConfigId: 'ask' })
      expect(response.statusCode, response.body).toBe(201)
      const created = response.json()
      expect(created.sessionId).toMatch(/^ses_/)
      expect(created.requestUri.startsWith(`${world.tenants.a.verifier}/requests/`)).toBe(true)
    })
  })

  describe('error', () => {
    it('401 problem+json without a token', async () => {
      const response = await world.app.inject({ method: 'POST', url: '/api/offers', payload: offer })
      expect(response.statusCode).toBe(401)
      expect(response.headers['content-type']).toMatch(PROBLEM)
    })

    it('a claim that is no field of the configuration is 422 naming its path', async () => {
      const response = await post('/api/offers', {
        credentialConfigurationIds: ['pid'],
        claims: { pid: { given_name: 'Erika', shoe_size: 44 } },
      })
      expect(response.statusCode).toBe(422)
      expect(response.json()).toMatchObject({
        code: 'rule_violation',
        errors: [expect.objectContaining({ path: 'body.claims.pid.shoe_size' })],
      })
    })

    it('an unknown configuration is refused for an offer and a request alike', async () => {
      const unknownOffer = await post('/api/offers', { credentialConfigurationIds: ['nope'], claims: {} })
      expect(unknownOffer.statusCode).toBeGreaterThanOrEqual(400)
      expect(unknownOffer.statusCode).toBeLessThan(500)
      expect(unknownOffer.headers['content-type']).toMatch(PROBLEM)
      const unknownRequest = await post('/api/presentation-requests', { presentationConfigId: 'nope' })
      expect(unknownRequest.statusCode).toBeGreaterThanOrEqual(400)
      expect(unknownRequest.statusCode).toBeLessThan(500)
      expect(unknownRequest.headers['content-type']).toMatch(PROBLEM)
    })
  })

  describe('security', () => {
    it("tenant B's client cannot make offers or requests under tenant A's path", async () => {
      const { a, b } = world.tenants
      const asB = await post(`/api/tenants/${a.id}/offers`, offer, b.auth)
      expect([403, 404]).toContain(asB.statusCode)
      const requestAsB = await post(
        `/api/tenants/${a.id}/presentation-requests`,
        { presentationConfigId: 'ask' },
        b.auth,
      )
      expect([403, 404]).toContain(requestAsB.statusCode)
    })

    it("a session tenant A made is not found by tenant B's client", async () => {
      const created = (await post('/api/offers', offer)).json()
      const { a, b } = world.tenants
      const asB = await world.app.inject({ url: `/api/sessions/${created.sessionId}`, headers: b.auth })
      expect(asB.statusCode).toBe(404)
      expect(
        (await world.app.inject({ url: `/api/sessions/${created.sessionId}`, headers: a.auth })).statusCode,
      ).toBe(200)
    })
  })
})
