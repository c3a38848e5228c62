import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { setGlobalConfig } from '@openid4vc/oauth2'
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type IssuerEntity, publicJwk, startIssuerEntities } from './federation-issuer-entities'
import { freePort } from './free-port'
import { startAllInOne, tenantAdmin } from './harness'
import { type LocalFederation, startLocalFederation } from './local-federation'
import { resolveAndAnswer } from './oid4vp-wallet'

// biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
type Loose = Record<string, any>

setGlobalConfig({ allowInsecureUrls: true })
const MARK = 'https://marks.test/verified-rp'

/**
 * A VCDM 1.1 VC-JWT of `entity` without x5c (VCDM 1.1 §6.3.1: `iss` the issuer, the credential in
 * `vc`; its key named by `kid`), in a VP JWT signed by the holder for `request` (OpenID4VP 1.0
 * B.1.3). Built with jose only.
 */
async function federatedVcPresentation(
  entity: IssuerEntity,
  request: { nonce: string; client_id: string },
  iss = entity.id,
): Promise<string> {
  const holder = await generateKeyPair('ES256')
  const credential = await new SignJWT({
    vc: {
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      type: ['VerifiableCredential', 'AgeCredential'],
      credentialSubject: { age_over_18: true },
    },
    cnf: { jwk: await exportJWK(holder.publicKey) },
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: entity.credentialJwk.kid as string })
    .setIssuer(iss)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(entity.credentialKey.privateKey)
  return new SignJWT({
    vp: {
      '@context': ['https://www.w3.org/2018/credentials/v1'],
      type: ['VerifiablePresentation'],
      verifiableCredential: [credential],
    },
    nonce: request.nonce,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setAudience(request.client_id)
    .setIssuedAt()
    .sign(holder.privateKey)
}

/**
 * V-32 for jwt_vc_json (OpenID4VP 1.0 Appendix B.1) through OpenID Federation 1.0: a VC-JWT without
 * x5c is trusted when its `iss`, as an entity identifier, has a trust chain (§4, §10) to the anchor
 * of a trust list of source type openid-federation, with the policies (§6.1) and required trust
 * marks (§7.3); its key is the one the resolved `openid_credential_issuer` metadata names by `kid`.
 */
describe('OpenID Federation 1.0 trust sources for jwt_vc_json issuers (V-32, OpenID4VP 1.0 B.1)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  let federation: LocalFederation
  let issuers: Awaited<ReturnType<typeof startIssuerEntities>>
  const tenant = `fj-${crypto.randomUUID().slice(0, 8)}`

  const api = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Loose }> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...auth },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, json: (await response.json()) as Loose }
  }

  async function present(configId: string, entity: IssuerEntity, iss?: string): Promise<Loose> {
    const created = (await api('POST', '/api/presentation-requests', { presentationConfigId: configId })).json
    await resolveAndAnswer(created.authorizationRequestUri, async (request) => ({
      age: [await federatedVcPresentation(entity, request as { nonce: string; client_id: string }, iss)],
    }))
    return (await api('GET', `/api/sessions/${created.sessionId}`)).json
  }

  const createConfig = (id: string, trustListIds: string[]) =>
    api('POST', '/api/presentations', {
      id,
      dcqlQuery: {
        credentials: [
          {
            id: 'age',
            format: 'jwt_vc_json',
            meta: { type_values: [['AgeCredential']] },
            claims: [{ path: ['credentialSubject', 'age_over_18'] }],
          },
        ],
      },
      keyChainId: 'keys',
      responseMode: 'direct_post',
      trustListIds,
    })

  beforeAll(async () => {
    federation = await startLocalFederation()
    issuers = await startIssuerEntities(federation)
    const port = await freePort()
    baseUrl = `http://localhost:${port}`
    const started = await startAllInOne(testDatabases().at(-1) as TestDatabase, baseUrl, {
      // The local federation listens on loopback, which the outbound policy refuses unless allowed.
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    app = started.app
    await app.listen({ host: '::', port })
    auth = (
      await tenantAdmin(app, started, tenant, ['key:manage', 'presentation:config', 'presentation:request'])
    ).admin
    expect((await api('POST', '/api/key-chains', { source: 'generate', id: 'keys' })).status).toBe(201)
    for (const [id, extra] of [
      ['fed', {}],
      ['fed-marked', { requiredTrustMarkTypes: [MARK] }],
    ] as const) {
      const source = {
        type: 'openid-federation',
        trustAnchor: federation.anchorId,
        jwks: federation.anchorJwks,
      }
      expect((await api('POST', '/api/trust-lists', { id, source: { ...source, ...extra } })).status).toBe(
        201,
      )
      expect((await createConfig(id, [id])).status).toBe(201)
    }
    expect((await createConfig('plain', [])).status).toBe(201)
  })
  afterAll(async () => {
    await app?.close()
    await federation?.close()
    await issuers?.close()
  })

  it('§10, V-32: a VC-JWT whose iss chains through the intermediate to the anchor verifies, its key taken from the resolved metadata', async () => {
    const session = await present('fed', await issuers.issuer('jwt-good'))
    expect(session).toMatchObject({ status: 'verified', failureReason: null })
  })

  it('VCDM 1.1 §6.3.1 iss: a credential signed by one entity but naming another iss is refused (the key of the named one does not verify it)', async () => {
    const signer = await issuers.issuer('jwt-signer')
    const named = await issuers.issuer('jwt-named')
    const session = await present('fed', signer, named.id)
    expect(session.status).toBe('failed')
    expect(session.failureReason).toContain(
      `kid ${signer.credentialJwk.kid} names no key of the openid_credential_issuer metadata of ${named.id}`,
    )
  })

  it('§7.3: without the required trust mark, "missing trust mark"; with it, verified', async () => {
    const unmarked = await issuers.issuer('jwt-unmarked')
    const refused = await present('fed-marked', unmarked)
    expect(refused.status).toBe('failed')
    expect(refused.failureReason).toBe(
      `the issuer ${unmarked.id} is not trusted through OpenID Federation: trust source 'fed-marked' (missing trust mark): no valid trust chain from ${unmarked.id} to a configured trust anchor: the entity has no trust mark of type ${MARK}`,
    )
    const marked = await issuers.issuer('jwt-marked', {}, [MARK])
    expect(await present('fed-marked', marked)).toMatchObject({ status: 'verified', failureReason: null })
  })

  it('§4, §3.2, §6.1: broken chain, expired statement and policy violation are refused with their reason', async () => {
    const stranger = await generateKeyPair('ES256')
    const broken = await issuers.issuer('jwt-broken', {
      listedKey: await publicJwk(stranger, 'x-federation'),
    })
    expect((await present('fed', broken)).failureReason).toContain(`trust source 'fed' (broken chain)`)
    const expired = await issuers.issuer('jwt-expired', {
      claims: { exp: Math.floor(Date.now() / 1000) - 3600 },
    })
    expect((await present('fed', expired)).failureReason).toContain(`trust source 'fed' (expired statement)`)
    const wrong = await issuers.issuer('jwt-wrong', {
      claims: {
        metadata_policy: {
          openid_credential_issuer: { credential_issuer: { one_of: ['https://elsewhere.example'] } },
        },
      },
    })
    expect((await present('fed', wrong)).failureReason).toContain(`trust source 'fed' (policy violation)`)
  })

  it('V-32: without an openid-federation trust source, a VC-JWT without x5c is refused', async () => {
    const session = await present('plain', await issuers.issuer('jwt-plain'))
    expect(session.status).toBe('failed')
    expect(session.failureReason).toContain('x5c')
  })
})
