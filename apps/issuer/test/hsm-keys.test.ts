import { changeSoftHsmPin, createSoftHsmToken, type SoftHsmToken } from '@credential-service/crypto/testing'
import { startWorld, type World } from '@credential-service/management/testing'
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildIssuerApp } from '../src/app'
import {
  PRE_AUTHORIZED_GRANT,
  postForm,
  preAuthorizedOffer,
  readyToRequest,
  requestCredential,
} from './world'

// Issue 40: an issuer whose key chain lives on a PKCS#11 token (SoftHSM2), made at config import
// (test/worlds/pkcs11: `source: generate`, `kmsProvider: pkcs11`), serving wallets.
describe('an issuer signing on a PKCS#11 token', () => {
  let token: SoftHsmToken
  let world: World
  beforeAll(async () => {
    token = await createSoftHsmToken()
    world = await startWorld('pkcs11', {
      env: {
        PKCS11_MODULE: token.module,
        PKCS11_TOKEN_LABEL: token.tokenLabel,
        PKCS11_PIN: 'env:TEST_HSM_PIN',
        TEST_HSM_PIN: token.pin,
      },
      apps: ({ config, database }) => [buildIssuerApp({ config, database, noncePurgeSeconds: 0 })],
    })
  })
  afterAll(() => world?.close())

  const jwks = async () =>
    (await world.app.inject({ url: `/issuers/${world.tenants.a.id}/jwks` })).json().keys as Array<
      JWK & { kid: string }
    >

  describe('happy', () => {
    it('config import generated the key on the token; the credential verifies with the published JWK and x5c', async () => {
      const { a } = world.tenants
      const chain = (
        await world.management.inject({ url: '/api/key-chains/hsm-keys', headers: a.auth })
      ).json()
      expect(chain).toMatchObject({
        kmsProvider: 'pkcs11',
        externalKeyId: expect.stringMatching(new RegExp(`^${a.id}/hsm-keys/[0-9a-f]{8}$`)),
        algorithm: 'ES256',
        certificateMode: 'internal-ca',
      })
      const ready = await readyToRequest(world, 'a')
      const response = await requestCredential(world, a.id, ready.accessToken, ready.body)
      expect(response.statusCode).toBe(200)
      const issuerJwt = (response.json().credentials[0].credential as string).split('~')[0] as string
      const header = decodeProtectedHeader(issuerJwt)
      expect(header.kid).toBe(chain.activeKey.kid)
      expect(header.x5c).toHaveLength(1)
      const published = (await jwks()).find((key) => key.kid === header.kid) as JWK
      await expect(compactVerify(issuerJwt, await importJWK(published, 'ES256'))).resolves.toBeDefined()
    })

    it('rotation makes a new key on the token; the rotated-out key stays published through its grace period', async () => {
      const { a } = world.tenants
      const before = (
        await world.management.inject({ url: '/api/key-chains/hsm-keys', headers: a.auth })
      ).json()
      const rotated = await world.management.inject({
        method: 'POST',
        url: '/api/key-chains/hsm-keys/rotate',
        headers: a.auth,
        payload: {},
      })
      expect(rotated.statusCode).toBe(200)
      expect(rotated.json()).toMatchObject({
        kmsProvider: 'pkcs11',
        certificateMode: 'internal-ca',
        previousKey: { kid: before.activeKey.kid },
      })
      expect(rotated.json().externalKeyId).not.toBe(before.externalKeyId)
      expect(rotated.json().activeKey.kid).not.toBe(before.activeKey.kid)
      const kids = (await jwks()).map((key) => key.kid)
      expect(kids).toEqual(expect.arrayContaining([before.activeKey.kid, rotated.json().activeKey.kid]))
    })
  })

  describe('error', () => {
    it('issue 40: a token that drops its sessions and refuses the login is 503 temporarily_unavailable with Retry-After; once it accepts, the next request signs', async () => {
      const { a } = world.tenants
      const token_ = (code: string) =>
        postForm(world.app, `/issuers/${a.id}/token`, {
          grant_type: PRE_AUTHORIZED_GRANT,
          'pre-authorized_code': code,
        })
      const offer = () =>
        preAuthorizedOffer(world.management, a.auth, ['pid'], { pid: { given_name: 'E', family_name: 'M' } })
      const [first, second, third] = [await offer(), await offer(), await offer()]
      expect((await token_(first.code)).statusCode).toBe(200)
      // The HSM's user PIN changed behind the service's back: its sessions and login are gone.
      await changeSoftHsmPin(token, token.pin, 'rotated-by-the-hsm-admin')
      const down = await token_(second.code)
      expect(down.statusCode).toBe(503)
      expect(down.headers['retry-after']).toBe('5')
      expect(down.json()).toStrictEqual({
        error: 'temporarily_unavailable',
        error_description: 'the signing key is unavailable; retry later',
      })
      expect(down.body).not.toContain(token.tokenLabel)
      await changeSoftHsmPin(token, 'rotated-by-the-hsm-admin', token.pin)
      expect((await token_(third.code)).statusCode).toBe(200)
    })
  })
})
