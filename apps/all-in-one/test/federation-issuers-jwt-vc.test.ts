import { setGlobalConfig } from '@openid4vc/oauth2'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type IssuerEntity, publicJwk } from './federation-issuer-entities'
import { type Loose, startFederatedVerifier } from './federation-verifier-world'
import type { LocalFederation } from './local-federation'

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
  let world: Awaited<ReturnType<typeof startFederatedVerifier>>
  let federation: LocalFederation
  let issuers: typeof world.issuers
  const tenant = `fj-${crypto.randomUUID().slice(0, 8)}`
  const api = (method: string, path: string, body?: unknown) => world.api(method, path, body)
  const presented = (configId: string, entity: IssuerEntity, iss?: string) =>
    world.present(configId, (request) => federatedVcPresentation(entity, request, iss))
  const present = async (configId: string, entity: IssuerEntity, iss?: string) =>
    (await presented(configId, entity, iss)).session

  const createConfig = (id: string, trustListIds: string[], query: Loose = {}, config: Loose = {}) =>
    api('POST', '/api/presentations', {
      id,
      dcqlQuery: {
        credentials: [
          {
            id: 'age',
            format: 'jwt_vc_json',
            meta: { type_values: [['AgeCredential']] },
            claims: [{ path: ['credentialSubject', 'age_over_18'] }],
            ...query,
          },
        ],
      },
      keyChainId: 'keys',
      responseMode: 'direct_post',
      trustListIds,
      ...config,
    })

  beforeAll(async () => {
    world = await startFederatedVerifier(tenant, ['presentation:config', 'presentation:request'])
    federation = world.federation
    issuers = world.issuers
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
    await world?.close()
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

  it('V-10, OpenID4VP 1.0 §6.1.1: trusted_authorities openid_federation in a jwt_vc_json query: naming the intermediate of the chain verifies, naming another entity is refused; from-anchors sends the anchor', async () => {
    const good = await issuers.issuer('jwt-authorities')
    const named = (values: string[]) => ({ trusted_authorities: [{ type: 'openid_federation', values }] })
    expect((await createConfig('jwt-named', ['fed'], named([federation.intermediateId]))).status).toBe(201)
    expect(await present('jwt-named', good)).toMatchObject({ status: 'verified', failureReason: null })
    expect((await createConfig('jwt-other', ['fed'], named(['https://other-anchor.example']))).status).toBe(
      201,
    )
    expect((await present('jwt-other', good)).failureReason).toBe(
      `the issuer ${good.id} is not trusted through OpenID Federation: trust source 'fed': its trust chain passes through none of the entities the query's trusted_authorities name (OpenID4VP 1.0 §6.1.1: openid_federation https://other-anchor.example)`,
    )
    expect((await createConfig('jwt-from', ['fed'], {}, { trustedAuthorities: 'from-anchors' })).status).toBe(
      201,
    )
    const { request, session } = await presented('jwt-from', good)
    expect(request.dcql_query.credentials[0].trusted_authorities).toContainEqual({
      type: 'openid_federation',
      values: [federation.anchorId],
    })
    expect(session.status).toBe('verified')
  })
})
