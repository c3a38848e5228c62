import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  PRE_AUTHORIZED_GRANT,
  postForm,
  preAuthorizedOffer,
  readyToRequest,
  requestCredential,
  startIssuerWorld,
  type World,
} from './world'

const CLAIMS = { pid: { given_name: 'Erika', family_name: 'Mustermann' } }

// routes/oid4vci.ts: metadata, offers by reference, /token, /nonce, /challenge and /notification
// (OpenID4VCI 1.0), the issuer served alone over the `issuance` world.
describe('issuer metadata, offers, token, nonce, challenge and notification', () => {
  let world: World
  beforeAll(async () => {
    world = await startIssuerWorld()
  })
  afterAll(() => world.close())

  const token = (tenant: string, code: string) =>
    postForm(world.app, `/issuers/${tenant}/token`, {
      grant_type: PRE_AUTHORIZED_GRANT,
      'pre-authorized_code': code,
    })

  describe('happy', () => {
    it('§12.2.2: the issuer metadata names the issuer and every imported configuration', async () => {
      const { a } = world.tenants
      const response = await world.app.inject({
        url: `/.well-known/openid-credential-issuer/issuers/${a.id}`,
      })
      expect(response.statusCode).toBe(200)
      const metadata = response.json()
      expect(metadata).toMatchObject({
        credential_issuer: a.issuer,
        credential_endpoint: `${a.issuer}/credential`,
        nonce_endpoint: `${a.issuer}/nonce`,
      })
      expect(Object.keys(metadata.credential_configurations_supported).sort()).toStrictEqual(a.credentials)
      expect(metadata.credential_configurations_supported.mdl).toMatchObject({
        format: 'mso_mdoc',
        doctype: 'org.iso.18013.5.1.mDL',
      })
    })

    it('§12.2.3: asked for application/jwt, the metadata is signed with sub = the issuer', async () => {
      const { a } = world.tenants
      const response = await world.app.inject({
        url: `/.well-known/openid-credential-issuer/issuers/${a.id}`,
        headers: { accept: 'application/jwt' },
      })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toMatch(/^application\/jwt/)
      expect(decodeProtectedHeader(response.body)).toMatchObject({ typ: 'openidvci-issuer-metadata+jwt' })
      expect(decodeJwt(response.body)).toMatchObject({ sub: a.issuer, credential_issuer: a.issuer })
    })

    it('RFC 8414 §3: the authorization server metadata of the tenant', async () => {
      const { a } = world.tenants
      const response = await world.app.inject({
        url: `/.well-known/oauth-authorization-server/issuers/${a.id}`,
      })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ issuer: a.issuer, token_endpoint: `${a.issuer}/token` })
    })

    it('§4.1.3: an offer by reference is served at its credential_offer_uri, not cached', async () => {
      const { a } = world.tenants
      const offer = await preAuthorizedOffer(world.management, a.auth, ['pid'], CLAIMS, { byReference: true })
      const response = await world.app.inject({ url: new URL(offer.credentialOfferUri as string).pathname })
      expect(response.statusCode).toBe(200)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.json()).toMatchObject({
        credential_issuer: a.issuer,
        credential_configuration_ids: ['pid'],
      })
    })

    it('§6.2: a pre-authorized code is exchanged for an access token, not cached', async () => {
      const { a } = world.tenants
      const offer = await preAuthorizedOffer(world.management, a.auth, ['pid'], CLAIMS)
      const response = await token(a.id, offer.code)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.json()).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer' })
    })

    it('§7.2: every nonce request gets a fresh c_nonce, not cached', async () => {
      const url = `/issuers/${world.tenants.a.id}/nonce`
      const first = await world.app.inject({ method: 'POST', url })
      const second = await world.app.inject({ method: 'POST', url })
      expect(first.statusCode).toBe(200)
      expect(first.headers['cache-control']).toBe('no-store')
      expect(first.json().c_nonce).toEqual(expect.any(String))
      expect(second.json().c_nonce).not.toBe(first.json().c_nonce)
    })

    it('ABCA §8: the challenge endpoint answers an attestation_challenge', async () => {
      const response = await world.app.inject({
        method: 'POST',
        url: `/issuers/${world.tenants.a.id}/challenge`,
      })
      expect(response.statusCode).toBe(200)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.json()).toStrictEqual({ attestation_challenge: expect.any(String) })
    })

    it('§11.1: the wallet notifies that it accepted the credential: 204', async () => {
      const { accessToken, body } = await readyToRequest(world, 'a')
      const issued = await requestCredential(world, world.tenants.a.id, accessToken, body)
      const response = await world.app.inject({
        method: 'POST',
        url: `/issuers/${world.tenants.a.id}/notification`,
        headers: { authorization: `Bearer ${accessToken}` },
        payload: { notification_id: issued.json().notification_id, event: 'credential_accepted' },
      })
      expect(response.statusCode, response.body).toBe(204)
    })
  })

  describe('error', () => {
    it('an unknown tenant has no metadata: 404', async () => {
      for (const url of [
        '/.well-known/openid-credential-issuer/issuers/nobody-here',
        '/.well-known/oauth-authorization-server/issuers/nobody-here',
      ]) {
        const response = await world.app.inject({ url })
        expect(response.statusCode).toBe(404)
        expect(response.json()).toMatchObject({ error: 'not_found' })
      }
    })

    it('an unknown offer id is 404', async () => {
      const response = await world.app.inject({ url: `/issuers/${world.tenants.a.id}/offers/no-such-offer` })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toMatchObject({ error: 'not_found' })
    })

    it('RFC 6749 §5.2: no grant_type is unsupported_grant_type, a wrong code invalid_grant', async () => {
      const { id } = world.tenants.a
      const none = await postForm(world.app, `/issuers/${id}/token`, { 'pre-authorized_code': 'x' })
      expect(none.statusCode).toBe(400)
      expect(none.headers['cache-control']).toBe('no-store')
      expect(none.json()).toMatchObject({ error: 'unsupported_grant_type' })
      const wrong = await token(id, 'not-a-code-we-gave')
      expect(wrong.statusCode).toBe(400)
      expect(wrong.json()).toMatchObject({ error: 'invalid_grant' })
    })

    it('§11.3: a notification without a token is invalid_token, with an unknown id invalid_notification_id', async () => {
      const url = `/issuers/${world.tenants.a.id}/notification`
      const payload = { notification_id: 'no-such-id', event: 'credential_accepted' }
      const anonymous = await world.app.inject({ method: 'POST', url, payload })
      expect(anonymous.statusCode).toBe(401)
      expect(anonymous.json()).toMatchObject({ error: 'invalid_token' })
      const { accessToken } = await readyToRequest(world, 'a')
      const unknown = await world.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${accessToken}` },
        payload,
      })
      expect(unknown.statusCode).toBe(400)
      expect(unknown.json()).toMatchObject({ error: 'invalid_notification_id' })
    })
  })

  describe('security', () => {
    it("tenant B does not redeem tenant A's pre-authorized code, which stays good at A", async () => {
      const { a, b } = world.tenants
      const offer = await preAuthorizedOffer(world.management, a.auth, ['pid'], CLAIMS)
      const atB = await token(b.id, offer.code)
      expect(atB.statusCode).toBe(400)
      expect(atB.json()).toMatchObject({ error: 'invalid_grant' })
      expect((await token(a.id, offer.code)).statusCode).toBe(200)
    })

    it("tenant B does not serve tenant A's offer by reference", async () => {
      const { a, b } = world.tenants
      const offer = await preAuthorizedOffer(world.management, a.auth, ['pid'], CLAIMS, { byReference: true })
      const path = new URL(offer.credentialOfferUri as string).pathname
      const response = await world.app.inject({ url: path.replace(`/issuers/${a.id}/`, `/issuers/${b.id}/`) })
      expect(response.statusCode).toBe(404)
    })

    it('§6.1: a pre-authorized code is redeemed once', async () => {
      const { a } = world.tenants
      const offer = await preAuthorizedOffer(world.management, a.auth, ['pid'], CLAIMS)
      expect((await token(a.id, offer.code)).statusCode).toBe(200)
      const again = await token(a.id, offer.code)
      expect(again.statusCode).toBe(400)
      expect(again.json()).toMatchObject({ error: 'invalid_grant' })
    })
  })
})
