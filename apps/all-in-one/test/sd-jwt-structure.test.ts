import { createHash } from 'node:crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { type Loose, startAttributeProvider } from './issuer-fixture'
import { issueOverHttp, redeemOffer } from './wallet'

const message = (name: string) =>
  `'${name}' is an SD-JWT structure name (RFC 9901 §4.2); claims cannot use it`
/** The holder's own disclosure, and the digest of it it would like the issuer to sign. */
const forged = Buffer.from(JSON.stringify(['salt', 'age_over_18', true])).toString('base64url')
const forgedDigest = createHash('sha256').update(forged).digest('base64url')

describe.each(testDatabases())(
  'SD-JWT structure names in claims and disclosures on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let database: DatabaseHandle
    let baseUrl: string
    let admin: Record<string, string>
    let provider: Awaited<ReturnType<typeof startAttributeProvider>>
    let tenant: string

    const api = async (method: string, url: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${url}`, {
        method,
        headers: { ...admin, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })
      return { status: response.status, body: (await response.json()) as Loose }
    }
    beforeAll(async () => {
      const port = await freePort()
      baseUrl = `http://127.0.0.1:${port}`
      provider = await startAttributeProvider()
      // The `sd-jwt-structure` world (test/worlds/sd-jwt-structure): tenant a's `pid` and `hr-pid`
      // (claims from `hr`, this provider) have object and array claims; `names` asks for `pid`.
      const started = await startAllInOneWorld(testDatabase, 'sd-jwt-structure', baseUrl, {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        ATTRIBUTE_PROVIDER_URL: provider.url,
      })
      app = started.app
      database = started.database
      await app.listen({ host: '127.0.0.1', port })
      tenant = started.tenants.a.id
      admin = started.tenants.a.auth
    })
    afterAll(async () => {
      await provider.close()
      await app.close()
    })

    const issue = (
      configurationId: string,
      claims: Record<string, unknown>,
      offer?: Record<string, unknown>,
    ) =>
      issueOverHttp({
        apiBase: baseUrl,
        auth: admin,
        configurationId,
        claims,
        ...(offer ? { offer } : {}),
      })

    /** The wallet's credential request is refused for the `_sd` in `address`, before anything is signed. */
    const expectDenied = (credentialOffer: Record<string, unknown>, configurationId: string) =>
      expect(redeemOffer({ credentialOffer, configurationId })).rejects.toThrow(
        `400 ${JSON.stringify({
          error: 'credential_request_denied',
          // RFC 6749 §5.2: error_description is ASCII, so § reads as ?.
          error_description: `claims of '${configurationId}' failed validation: claims.address._sd ${message('_sd').replace('§', '?')}`,
        })}`,
      )

    /**
     * The wallet's answer to a new request of 'names': the given name disclosed, then `extra`
     * disclosures appended, all under a KB-JWT whose `sd_hash` covers them (RFC 9901 §4.3.1), so
     * only the disclosure checks can tell.
     */
    async function present(issued: Awaited<ReturnType<typeof issue>>, extra: string[]) {
      const request = (await api('POST', '/api/presentation-requests', { presentationConfigId: 'names' }))
        .body
      const claims = decodeJwt(await (await fetch(request.requestUri)).text()) as Loose
      const holder = new SDJwtVcInstance({ hasher: digest, saltGenerator: generateSalt })
      const disclosed = await holder.present(issued.credential, { given_name: true })
      const sdJwt = `${disclosed}${extra.map((disclosure) => `${disclosure}~`).join('')}`
      const kbJwt = await new SignJWT({
        nonce: claims.nonce,
        aud: claims.client_id,
        iat: Math.floor(Date.now() / 1000),
        sd_hash: createHash('sha256').update(sdJwt).digest('base64url'),
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
        .sign(issued.holder.privateKey)
      await fetch(claims.response_uri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          vp_token: JSON.stringify({ pid: [`${sdJwt}${kbJwt}`] }),
          state: claims.state,
        }),
      })
      return (await api('GET', `/api/sessions/${request.sessionId}`)).body
    }

    it('S-129 RFC 9901 §4.2: an offer whose object claim holds _sd, or whose array holds {"...": digest}, is a 422 naming the path', async () => {
      const offer = (claims: Record<string, unknown>) =>
        api('POST', '/api/offers', { credentialConfigurationIds: ['pid'], claims: { pid: claims } })
      const inObject = await offer({ given_name: 'Erika', address: { _sd: [forgedDigest] } })
      expect(inObject.status).toBe(422)
      expect(inObject.body).toMatchObject({ status: 422, code: 'rule_violation' })
      expect(inObject.body.errors).toStrictEqual([
        { path: 'body.claims.pid.address._sd', message: message('_sd') },
      ])
      const inArray = await offer({ given_name: 'Erika', nationalities: ['DE', { '...': forgedDigest }] })
      expect(inArray.status).toBe(422)
      expect(inArray.body.errors).toStrictEqual([
        { path: 'body.claims.pid.nationalities.1....', message: message('...') },
      ])
      expect((await offer({ given_name: 'Erika', address: { locality: 'Köln' } })).status).toBe(201)
    })

    it('S-129 RFC 9901 §4.2: an attribute provider answering {"_sd": [digest]} is credential_request_denied; the session fails and nothing is signed', async () => {
      provider.answer({ given_name: 'Erika', address: { _sd: [forgedDigest] } })
      const offer = (await api('POST', '/api/offers', { credentialConfigurationIds: ['hr-pid'] })).body
      await expectDenied(offer.credentialOffer, 'hr-pid')
      expect((await api('GET', `/api/sessions/${offer.sessionId}`)).body).toMatchObject({
        status: 'failed',
        failureReason: `claims of 'hr-pid' failed validation: claims.address._sd ${message('_sd')}`,
      })
      // The same provider with plain values issues.
      provider.answer({ given_name: 'Erika', address: { locality: 'Köln' } })
      const issued = await issue('hr-pid', {}, { claims: {} })
      expect(issued.credential.split('~')[0]).toMatch(/^ey/)
    })

    it('S-129 RFC 9901 §4.2: an offer stored before the check (claims in clear) is refused right before signing', async () => {
      const offer = (
        await api('POST', '/api/offers', {
          credentialConfigurationIds: ['pid'],
          claims: { pid: { given_name: 'x' } },
        })
      ).body
      // As a previous version stored it: claims in clear, checked against the fields only.
      const claims = JSON.stringify({ pid: { given_name: 'Erika', address: { _sd: [forgedDigest] } } })
      await queryRows(
        database.db,
        sql`update issuance_sessions set claims = ${claims}::jsonb, claims_encrypted = null where tenant_id = ${tenant} and id = ${offer.sessionId}`,
      )
      await expectDenied(offer.credentialOffer, 'pid')
    })

    it('S-130 RFC 9901 §7.1 attack: the issuer never signs the holder’s digest, and the holder’s appended disclosure ["salt","age_over_18",true] fails the presentation', async () => {
      // The holder asks for its digest inside address: refused before anything is signed (S-129).
      const offer = await api('POST', '/api/offers', {
        credentialConfigurationIds: ['pid'],
        claims: { pid: { given_name: 'Erika', address: { _sd: [forgedDigest] } } },
      })
      expect(offer.status).toBe(422)
      // With a plain credential the forged disclosure is referenced by nothing.
      const issued = await issue('pid', { given_name: 'Erika' })
      expect(await present(issued, [])).toMatchObject({ status: 'verified', failureReason: null })
      expect(await present(issued, [forged])).toMatchObject({
        status: 'failed',
        failureReason: 'a disclosure is not referenced by any digest (RFC 9901 §7.1)',
      })
    })
  },
)
