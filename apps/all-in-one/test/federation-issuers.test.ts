import { setGlobalConfig } from '@openid4vc/oauth2'
import { generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  FEDERATION_VCT,
  federatedPresentation,
  type IssuerEntity,
  publicJwk,
} from './federation-issuer-entities'
import { type Loose, startFederatedVerifier } from './federation-verifier-world'
import type { LocalFederation } from './local-federation'

setGlobalConfig({ allowInsecureUrls: true })
const MARK = 'https://marks.test/verified-rp'

const sdJwtQuery = (extra: Loose = {}) => ({
  credentials: [
    {
      id: 'age',
      format: 'dc+sd-jwt',
      meta: { vct_values: [FEDERATION_VCT] },
      claims: [{ path: ['age_over_18'] }],
      ...extra,
    },
  ],
})

/**
 * Checklist V-32 through OpenID Federation 1.0: a trust list of source type openid-federation
 * makes SD-JWT VC issuers without x5c trusted when their `iss`, as an entity identifier, has a
 * trust chain (§4, §10) to the anchor with the policies (§6.1) and required trust marks (§7.3).
 */
describe('OpenID Federation 1.0 trust sources for the issuers of presented credentials (V-32, OpenID4VP 1.0 §6.1.1)', () => {
  let world: Awaited<ReturnType<typeof startFederatedVerifier>>
  let federation: LocalFederation
  let issuer: typeof world.issuers.issuer
  let entities: Map<string, IssuerEntity>
  const tenant = `fi-${crypto.randomUUID().slice(0, 8)}`
  const api = (method: string, path: string, body?: unknown) => world.api(method, path, body)
  const present = (configId: string, entity: IssuerEntity) =>
    world.present(configId, (request) => federatedPresentation(entity, request))

  const createConfig = (id: string, trustListIds: string[], extra: Loose = {}) =>
    api('POST', '/api/presentations', {
      id,
      dcqlQuery: sdJwtQuery(extra.query),
      keyChainId: 'keys',
      responseMode: 'direct_post',
      trustListIds,
      ...(extra.config ?? {}),
    })

  beforeAll(async () => {
    world = await startFederatedVerifier(tenant, [
      'presentation:config',
      'presentation:request',
      'issuance:config',
    ])
    federation = world.federation
    issuer = world.issuers.issuer
    entities = world.issuers.entities
    const source = (extra: Loose = {}) => ({
      type: 'openid-federation',
      trustAnchor: federation.anchorId,
      jwks: federation.anchorJwks,
      ...extra,
    })
    const fed = await api('POST', '/api/trust-lists', { id: 'fed', source: source() })
    expect(fed.status, JSON.stringify(fed.json)).toBe(201)
    expect(fed.json.status).toMatchObject({ state: 'current', certificateCount: 0 })
    expect(
      (
        await api('POST', '/api/trust-lists', {
          id: 'fed-marked',
          source: source({ requiredTrustMarkTypes: [MARK] }),
        })
      ).status,
    ).toBe(201)
    expect((await createConfig('fed', ['fed'])).status).toBe(201)
    expect((await createConfig('fed-marked', ['fed-marked'])).status).toBe(201)
  })
  afterAll(async () => {
    await world?.close()
  })

  it('OpenID Federation 1.0 §10, V-32: an SD-JWT VC whose issuer chains through the intermediate to the anchor verifies', async () => {
    const good = await issuer('good')
    const { session } = await present('fed', good)
    expect(session).toMatchObject({ status: 'verified', failureReason: null })
  })

  it('§7.3: a required trust mark the issuer holds (issued by the anchor, named in trust_mark_issuers) verifies; without it, "missing trust mark"', async () => {
    const marked = await issuer('marked', {}, [MARK])
    expect((await present('fed-marked', marked)).session).toMatchObject({
      status: 'verified',
      failureReason: null,
    })
    const unmarked = await issuer('unmarked')
    const { session } = await present('fed-marked', unmarked)
    expect(session.status).toBe('failed')
    expect(session.failureReason).toBe(
      `the issuer ${unmarked.id} is not trusted through OpenID Federation: trust source 'fed-marked' (missing trust mark): no valid trust chain from ${unmarked.id} to a configured trust anchor: the entity has no trust mark of type ${MARK}`,
    )
  })

  it('§4: an issuer whose configuration is signed with a key its superior does not list is refused, "broken chain"', async () => {
    const stranger = await generateKeyPair('ES256')
    const broken = await issuer('broken', { listedKey: await publicJwk(stranger, 'broken-federation') })
    const { session } = await present('fed', broken)
    expect(session.status).toBe('failed')
    expect(session.failureReason).toContain(
      `the issuer ${broken.id} is not trusted through OpenID Federation: trust source 'fed' (broken chain): no valid trust chain from ${broken.id}`,
    )
  })

  it('§3.2: an expired subordinate statement is refused, "expired statement"', async () => {
    const expired = await issuer('expired', { claims: { exp: Math.floor(Date.now() / 1000) - 3600 } })
    const { session } = await present('fed', expired)
    expect(session.status).toBe('failed')
    expect(session.failureReason).toContain(`trust source 'fed' (expired statement)`)
    expect(session.failureReason).toContain(
      `the statement of ${federation.intermediateId} about ${expired.id} has expired`,
    )
  })

  it('§6.1: metadata that does not comply with the policy of its superior is refused, "policy violation"', async () => {
    const wrong = await issuer('wrong-policy', {
      claims: {
        metadata_policy: {
          openid_credential_issuer: { credential_issuer: { one_of: ['https://elsewhere.example'] } },
        },
      },
    })
    const { session } = await present('fed', wrong)
    expect(session.status).toBe('failed')
    expect(session.failureReason).toContain(`trust source 'fed' (policy violation)`)
  })

  it('§6.1: a policy that removes the openid_credential_issuer keys leaves nothing to verify with, "policy violation"', async () => {
    const stripped = await issuer('stripped', {
      claims: { constraints: { allowed_entity_types: ['openid_credential_verifier'] } },
    })
    const { session } = await present('fed', stripped)
    expect(session).toMatchObject({
      status: 'failed',
      failureReason: `the issuer ${stripped.id} is not trusted through OpenID Federation: trust source 'fed' (policy violation): no openid_credential_issuer metadata survives the federation's policies and constraints`,
    })
  })

  it('V-32: without an openid-federation trust source, an SD-JWT VC without x5c is refused', async () => {
    expect((await createConfig('plain', [])).status).toBe(201)
    const { session } = await present('plain', entities.get('good') as IssuerEntity)
    expect(session.status).toBe('failed')
    expect(session.failureReason).toContain('x5c')
  })

  it('V-10, OpenID4VP 1.0 §6.1.1: trusted_authorities openid_federation naming an entity of the chain (the intermediate) verifies; naming another is refused', async () => {
    const named = await createConfig('fed-named', ['fed'], {
      query: { trusted_authorities: [{ type: 'openid_federation', values: [federation.intermediateId] }] },
    })
    expect(named.status, JSON.stringify(named.json)).toBe(201)
    const good = entities.get('good') as IssuerEntity
    const ok = await present('fed-named', good)
    expect(ok.request.dcql_query.credentials[0].trusted_authorities).toStrictEqual([
      { type: 'openid_federation', values: [federation.intermediateId] },
    ])
    expect(ok.session).toMatchObject({ status: 'verified', failureReason: null })
    expect(
      (
        await createConfig('fed-other', ['fed'], {
          query: {
            trusted_authorities: [{ type: 'openid_federation', values: ['https://other-anchor.example'] }],
          },
        })
      ).status,
    ).toBe(201)
    const refused = await present('fed-other', good)
    expect(refused.session).toMatchObject({
      status: 'failed',
      failureReason: `the issuer ${good.id} is not trusted through OpenID Federation: trust source 'fed': its trust chain passes through none of the entities the query's trusted_authorities name (OpenID4VP 1.0 §6.1.1: openid_federation https://other-anchor.example)`,
    })
  })

  it('a trust list of source type openid-federation needs an anchor the outbound policy allows and keys with kid (400 and 422 naming them)', async () => {
    const refused = await api('POST', '/api/trust-lists', {
      id: 'fed-bad',
      source: {
        type: 'openid-federation',
        trustAnchor: 'https://169.254.169.254/anchor',
        jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] },
      },
    })
    expect(refused.status, JSON.stringify(refused.json)).toBe(400)
    expect(refused.json.errors.map((error: Loose) => error.path)).toStrictEqual([
      'body.source.jwks.keys.0.kid',
    ])
    const internal = await api('POST', '/api/trust-lists', {
      id: 'fed-bad',
      source: {
        type: 'openid-federation',
        trustAnchor: 'https://169.254.169.254/anchor',
        jwks: federation.anchorJwks,
      },
    })
    expect(internal.status, JSON.stringify(internal.json)).toBe(422)
    expect(internal.json.errors.map((error: Loose) => error.path)).toStrictEqual(['body.source.trustAnchor'])
  })

  it('V-10, OpenID4VP 1.0 §6.1.1: from-anchors names the anchors of the openid-federation sources; openid_federation without such a source is 422 at save', async () => {
    expect(
      (await createConfig('fed-from', ['fed'], { config: { trustedAuthorities: 'from-anchors' } })).status,
    ).toBe(201)
    const { request, session } = await present('fed-from', entities.get('good') as IssuerEntity)
    expect(request.dcql_query.credentials[0].trusted_authorities).toContainEqual({
      type: 'openid_federation',
      values: [federation.anchorId],
    })
    expect(session.status).toBe('verified')
    const unsourced = await createConfig('unsourced', [], {
      query: { trusted_authorities: [{ type: 'openid_federation', values: [federation.anchorId] }] },
    })
    expect(unsourced.status).toBe(422)
    expect(unsourced.json.errors).toStrictEqual([
      {
        path: 'body.dcqlQuery.credentials.0.trusted_authorities.0.type',
        message:
          "openid_federation needs a trust list of source type openid-federation in this configuration's trustListIds: no credential under it could verify",
      },
    ])
  })
})
