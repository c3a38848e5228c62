import { resolveTrustChain, verifyTrustChain } from '@credential-service/crypto'
import type { FastifyInstance } from 'fastify'
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWK,
  jwtVerify,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, listenAllInOneWorld } from './harness'
import { type LocalFederation, startLocalFederation } from './local-federation'

const MARK = 'https://marks.test/verified-rp'

describe('OpenID Federation 1.0: the tenant’s issuer and verifier as federation entities', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  let otherIds: { issuer: string; verifier: string }
  let issuerId: string
  let verifierId: string
  let federation: LocalFederation
  const send = apiClient(
    () => baseUrl,
    () => auth,
  )
  const federationKeys = async (): Promise<{ keys: JWK[] }> => {
    const chain = (await send('GET', '/api/key-chains/federation')).body
    const keys = [chain.activeKey, ...(chain.previousKey ? [chain.previousKey] : [])]
    return { keys: keys.map((key: { publicJwk: JWK; kid: string }) => ({ ...key.publicJwk, kid: key.kid })) }
  }
  const entityConfiguration = async (entityId: string) => {
    const answer = await fetch(`${entityId}/.well-known/openid-federation`)
    return { status: answer.status, type: answer.headers.get('content-type'), jwt: await answer.text() }
  }
  const membership = async () => ({
    keyChainId: 'federation',
    authorityHints: [federation.intermediateId],
    trustAnchors: [{ entityId: federation.anchorId, jwks: federation.anchorJwks }],
    trustMarks: [{ trustMarkType: MARK, trustMark: await federation.trustMark(verifierId, MARK) }],
    lifetimeSeconds: 3600,
    organizationName: 'Verifier Interop',
  })

  beforeAll(async () => {
    const started = await listenAllInOneWorld('verifier-interop', {
      OUTBOUND_ALLOW_HTTP: 'true',
      // The local federation listens on loopback, which the outbound policy refuses unless allowed.
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    app = started.app
    baseUrl = started.baseUrl
    auth = started.tenants.a.auth
    otherIds = { issuer: started.tenants.b.issuer, verifier: started.tenants.b.verifier }
    issuerId = started.tenants.a.issuer
    verifierId = started.tenants.a.verifier
    federation = await startLocalFederation({
      anchorPolicy: { openid_credential_verifier: { vp_formats_supported: { essential: true } } },
    })
    expect((await send('POST', '/api/key-chains', { source: 'generate', id: 'federation' })).status).toBe(201)
    const saved = await send('PUT', '/api/federation', await membership())
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    for (const entity of [issuerId, verifierId]) federation.enrol(entity, await federationKeys())
  })
  afterAll(async () => {
    await app.close()
    await federation.close()
  })

  it('§9: the verifier’s entity configuration is self-signed with the federation key and carries its metadata, hints and trust marks', async () => {
    const { status, type, jwt } = await entityConfiguration(verifierId)
    expect(status).toBe(200)
    expect(type).toBe('application/entity-statement+jwt')
    const header = decodeProtectedHeader(jwt)
    const keys = await federationKeys()
    expect(header).toMatchObject({ typ: 'entity-statement+jwt', kid: keys.keys[0]?.kid })
    const claims = decodeJwt(jwt)
    expect(claims).toMatchObject({
      iss: verifierId,
      sub: verifierId,
      authority_hints: [federation.intermediateId],
      metadata: {
        federation_entity: { organization_name: 'Verifier Interop' },
        openid_credential_verifier: { vp_formats_supported: expect.any(Object) },
      },
      trust_marks: [{ trust_mark_type: MARK, trust_mark: expect.any(String) }],
    })
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600)
    expect((claims.jwks as { keys: JWK[] }).keys.map((key) => key.kid)).toStrictEqual(
      keys.keys.map((key) => key.kid),
    )
  })

  it('§9: the issuer’s entity configuration carries the credential issuer and authorization server metadata, and no trust mark about the verifier', async () => {
    const claims = decodeJwt((await entityConfiguration(issuerId)).jwt)
    expect(claims.iss).toBe(issuerId)
    expect(claims.trust_marks).toBeUndefined()
    const metadata = claims.metadata as Record<string, Record<string, unknown>>
    expect(metadata.openid_credential_issuer?.credential_issuer).toBe(issuerId)
    expect(metadata.oauth_authorization_server?.issuer).toBe(issuerId)
  })

  describe('OpenID4VCI 1.0 §12.2.3 signed metadata with a trust_chain header (OpenID Federation 1.0 §4.3)', () => {
    const metadataUrl = () => issuerId.replace('/issuers/', '/.well-known/openid-credential-issuer/issuers/')
    const signedMetadata = (headers: Record<string, string> = {}) =>
      fetch(metadataUrl(), { headers: { accept: 'application/jwt', ...headers } })

    /**
     * A wallet's check written from OpenID Federation 1.0 §10.2 with jose only: each statement is
     * signed by a key in the next one's `jwks`, the next one's `sub` is this one's `iss`, the last is
     * the anchor's configuration signed with the anchor keys the wallet holds, none has expired.
     * Answers the leaf's entity configuration claims.
     */
    const verifyChainWithJose = async (chain: string[], leaf: string) => {
      const now = Math.floor(Date.now() / 1000)
      const claims = chain.map((jwt) => decodeJwt(jwt))
      expect(claims[0]).toMatchObject({ iss: leaf, sub: leaf })
      for (const [index, jwt] of chain.entries()) {
        const last = index === chain.length - 1
        const keys = last ? federation.anchorJwks : (claims[index + 1]?.jwks as JSONWebKeySet)
        if (!last) expect(claims[index + 1]?.sub).toBe(claims[index]?.iss)
        const { payload, protectedHeader } = await jwtVerify(jwt, createLocalJWKSet(keys))
        expect(protectedHeader.typ).toBe('entity-statement+jwt')
        expect(payload.exp as number).toBeGreaterThan(now)
      }
      expect(claims.at(-1)).toMatchObject({ iss: federation.anchorId, sub: federation.anchorId })
      return claims[0] as { metadata: Record<string, Record<string, unknown>> }
    }

    it('§12.2.3 "a signed JSON Web Token (JWT) containing the Credential Issuer Metadata in its payload using the media type application/jwt" (I-13): typ openidvci-issuer-metadata+jwt, sub = the issuer, its key named by the chain', async () => {
      const answer = await signedMetadata()
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-type')).toMatch(/^application\/jwt/)
      const jwt = await answer.text()
      const header = decodeProtectedHeader(jwt)
      expect(header).toMatchObject({ typ: 'openidvci-issuer-metadata+jwt', kid: expect.any(String) })
      const chain = header.trust_chain as string[]
      expect(chain).toHaveLength(4)
      const leaf = await verifyChainWithJose(chain, issuerId)
      const issuerMetadata = leaf.metadata.openid_credential_issuer as { jwks: JSONWebKeySet }
      // The federation key signs entity statements only: the metadata key is the issuer metadata's jwks.
      expect(issuerMetadata.jwks.keys.map((key) => key.kid)).not.toContain(
        (await federationKeys()).keys[0]?.kid,
      )
      const { payload } = await jwtVerify(jwt, createLocalJWKSet(issuerMetadata.jwks), {
        typ: 'openidvci-issuer-metadata+jwt',
        subject: issuerId,
      })
      expect(payload).toMatchObject({ credential_issuer: issuerId, iat: expect.any(Number) })
      // The wallet's library resolves the same chain to the anchor.
      const resolved = await verifyTrustChain(chain, {
        anchors: [{ entityId: federation.anchorId, jwks: federation.anchorJwks }],
        now: new Date(),
      })
      expect(resolved.subject).toBe(issuerId)
    })

    it('signed once per metadata version and chain, with an ETag a wallet revalidates (304) like the JSON', async () => {
      const first = await signedMetadata()
      const etag = first.headers.get('etag') as string
      // RFC 9110 §8.8.1: weak, since each signature differs in its bytes (ECDSA) for one meaning.
      expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/)
      // ECDSA signatures differ every time: the same bytes mean the JWT was kept, not signed again.
      expect(await (await signedMetadata()).text()).toBe(await first.text())
      const revalidated = await signedMetadata({ 'if-none-match': etag })
      expect(revalidated.status).toBe(304)
      expect(revalidated.headers.get('etag')).toBe(etag)
      const json = await fetch(metadataUrl())
      expect(json.headers.get('content-type')).toMatch(/^application\/json/)
      expect(json.headers.get('etag')).not.toBe(etag)
    })
  })

  it('§10, §6.1, §7.3: a wallet resolves the verifier’s chain through the intermediate to the anchor, applies the policy and checks the trust mark', async () => {
    const result = await resolveTrustChain(verifierId, {
      anchors: [{ entityId: federation.anchorId, jwks: federation.anchorJwks }],
      now: new Date(),
      fetch: async (url) => (await fetch(url)).text(),
      requiredTrustMarks: [MARK],
    })
    expect(result.anchor).toBe(federation.anchorId)
    expect(result.statements).toHaveLength(4)
    expect(result.metadata.openid_credential_verifier?.vp_formats_supported).toBeDefined()
  })

  it('§3 jwks: "the public keys ... SHOULD NOT be used in other protocols": the federation key is in no other key set the tenant publishes, and no configuration may sign with it', async () => {
    const federationKids = (await federationKeys()).keys.map((key) => key.kid)
    const tenant = verifierId.split('/').pop()
    const kidsAt = async (url: string, pick: (body: Record<string, unknown>) => { kid?: string }[]) =>
      pick((await (await fetch(url)).json()) as Record<string, unknown>).map((key) => key.kid)
    const sets = {
      jwks: await kidsAt(`${issuerId}/jwks`, (body) => body.keys as JWK[]),
      jwtVcIssuer: await kidsAt(
        `${baseUrl}/.well-known/jwt-vc-issuer/issuers/${tenant}`,
        (body) => (body.jwks as { keys: JWK[] }).keys,
      ),
      didDocument: await kidsAt(`${verifierId}/did.json`, (body) =>
        (body.verificationMethod as { publicKeyJwk: JWK }[]).map((method) => method.publicKeyJwk),
      ),
      verifierMetadata: (
        (
          decodeJwt((await entityConfiguration(verifierId)).jwt).metadata as Record<
            string,
            { jwks: JSONWebKeySet }
          >
        ).openid_credential_verifier?.jwks.keys ?? []
      ).map((key) => key.kid),
    }
    // The request key chain is published; the federation one is not, anywhere.
    expect(sets.jwks.length).toBeGreaterThan(0)
    for (const [name, kids] of Object.entries(sets))
      expect(
        kids.filter((kid) => federationKids.includes(kid)),
        name,
      ).toStrictEqual([])
    const saved = await send('POST', '/api/presentations', {
      id: 'signs-with-federation-key',
      dcqlQuery: {
        credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] } }],
      },
      responseMode: 'direct_post',
      keyChainId: 'federation',
    })
    expect(saved.status).toBe(422)
    expect(saved.body.errors.map((error: { path: string }) => error.path)).toStrictEqual(['body.keyChainId'])
  })

  it('§11.1 key rollover: after a rotation the configuration is signed with the new key and publishes both', async () => {
    const before = (await federationKeys()).keys[0]?.kid
    expect((await send('POST', '/api/key-chains/federation/rotate', {})).status).toBe(200)
    const jwt = (await entityConfiguration(verifierId)).jwt
    const after = (await federationKeys()).keys[0]?.kid
    expect(after).not.toBe(before)
    expect(decodeProtectedHeader(jwt).kid).toBe(after)
    expect((decodeJwt(jwt).jwks as { keys: JWK[] }).keys.map((key) => key.kid)).toStrictEqual([after, before])
    // §11.1: the superior learns the new key too; until then a chain through it does not verify.
    for (const entity of [issuerId, verifierId]) federation.enrol(entity, await federationKeys())
  })

  it('management: a key chain that signs configurations, or a trust mark about another entity, is a 422 naming the field', async () => {
    const body = await membership()
    const answer = await send('PUT', '/api/federation', {
      ...body,
      keyChainId: 'keys',
      trustMarks: [
        { trustMarkType: MARK, trustMark: await federation.trustMark(`${baseUrl}/verifiers/other`, MARK) },
      ],
    })
    expect(answer.status).toBe(422)
    expect(answer.body.errors.map((error: { path: string }) => error.path).sort()).toStrictEqual([
      'body.keyChainId',
      'body.trustMarks.0.trustMark',
    ])
  })

  it('tenancy: another tenant’s issuer and verifier, no federation members, serve no entity configuration', async () => {
    expect((await entityConfiguration(otherIds.verifier)).status).toBe(404)
    expect((await entityConfiguration(otherIds.issuer)).status).toBe(404)
  })

  describe('OpenID4VP 1.0 §5.9.3 openid_federation client identifier prefix', () => {
    const PID_QUERY = {
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:eudi:pid:1'] },
          claims: [{ path: ['given_name'] }],
        },
      ],
    }
    const requestObject = async () => {
      const answer = await send('POST', '/api/presentation-requests', { presentationConfigId: 'federated' })
      expect(answer.status, JSON.stringify(answer.body)).toBe(201)
      const created = answer.body
      return { created, jwt: await (await fetch(created.requestUri)).text() }
    }

    it('§5.9.3 and OpenID Federation 1.0 §4.3: client_id openid_federation:<entity id>; the request object carries a trust_chain a wallet verifies to the anchor, and its key is in the resolved verifier metadata', async () => {
      const saved = await send('POST', '/api/presentations', {
        id: 'federated',
        dcqlQuery: PID_QUERY,
        responseMode: 'direct_post',
        keyChainId: 'keys',
        clientIdPrefix: 'openid_federation',
      })
      expect(saved.status, JSON.stringify(saved.body)).toBe(201)
      const { created, jwt } = await requestObject()
      expect(created.clientId).toBe(`openid_federation:${verifierId}`)
      const header = decodeProtectedHeader(jwt)
      expect(header).toMatchObject({ typ: 'oauth-authz-req+jwt', kid: expect.any(String) })
      expect(header.x5c).toBeUndefined()
      const chain = header.trust_chain as string[]
      expect(chain).toHaveLength(4)
      const resolved = await verifyTrustChain(chain, {
        anchors: [{ entityId: federation.anchorId, jwks: federation.anchorJwks }],
        now: new Date(),
      })
      expect(resolved.subject).toBe(verifierId)
      // The wallet takes the request key from the chain's metadata, never from client_metadata.
      const metadata = resolved.metadata.openid_credential_verifier as { jwks: JSONWebKeySet }
      const { payload } = await jwtVerify(jwt, createLocalJWKSet(metadata.jwks))
      expect(payload.client_id).toBe(`openid_federation:${verifierId}`)
    })

    it('the chain is resolved once per process and reused until its earliest exp', async () => {
      const first = decodeProtectedHeader((await requestObject()).jwt).trust_chain as string[]
      const second = decodeProtectedHeader((await requestObject()).jwt).trust_chain as string[]
      expect(second).toStrictEqual(first)
    })

    it('the kept chain outlives the tenant cache re-reading the membership (an unrelated change), and a rotated request key resolves a chain that names it', async () => {
      const first = decodeProtectedHeader((await requestObject()).jwt).trust_chain as string[]
      // An audited change of the tenant drops its cached rows in the process: the membership row is read again.
      const other = await send('POST', '/api/presentations', {
        id: 'federated-unrelated',
        dcqlQuery: PID_QUERY,
        responseMode: 'direct_post',
        keyChainId: 'keys',
      })
      expect(other.status, JSON.stringify(other.body)).toBe(201)
      // Our own configuration is signed at resolution (ECDSA: a new signature each time), so equal means reused.
      expect(decodeProtectedHeader((await requestObject()).jwt).trust_chain).toStrictEqual(first)

      expect((await send('POST', '/api/key-chains/keys/rotate', {})).status).toBe(200)
      const { jwt } = await requestObject()
      const chain = decodeProtectedHeader(jwt).trust_chain as string[]
      expect(chain).not.toStrictEqual(first)
      const resolved = await verifyTrustChain(chain, {
        anchors: [{ entityId: federation.anchorId, jwks: federation.anchorJwks }],
        now: new Date(),
      })
      const metadata = resolved.metadata.openid_credential_verifier as { jwks: JSONWebKeySet }
      await expect(jwtVerify(jwt, createLocalJWKSet(metadata.jwks))).resolves.toBeTruthy()
    })

    it('§5.9.3: direct_post.jwt with openid_federation is a 422 (the wallet ignores client_metadata, so the encryption key)', async () => {
      const saved = await send('POST', '/api/presentations', {
        id: 'federated-jwt',
        dcqlQuery: PID_QUERY,
        responseMode: 'direct_post.jwt',
        keyChainId: 'keys',
        clientIdPrefix: 'openid_federation',
      })
      expect(saved.status).toBe(422)
      expect(saved.body.errors.map((error: { path: string }) => error.path)).toStrictEqual([
        'body.responseMode',
      ])
    })
  })

  it('§12.2.3 with a chain that does not resolve (a superior that does not answer): the signed metadata is not served without its trust_chain; the JSON is (§12.2.2)', async () => {
    const broken = await send('PUT', '/api/federation', {
      ...(await membership()),
      authorityHints: ['http://127.0.0.1:9/no-superior'],
      trustMarks: [],
    })
    expect(broken.status, JSON.stringify(broken.body)).toBe(200)
    const answer = await fetch(
      issuerId.replace('/issuers/', '/.well-known/openid-credential-issuer/issuers/'),
      {
        headers: { accept: 'application/jwt' },
      },
    )
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
    expect(((await answer.json()) as { credential_issuer: string }).credential_issuer).toBe(issuerId)
  })

  it('leaving the federation: after DELETE the entity configurations are gone', async () => {
    const deleted = await fetch(`${baseUrl}/api/federation`, { method: 'DELETE', headers: auth })
    expect(deleted.status).toBe(204)
    expect((await entityConfiguration(verifierId)).status).toBe(404)
    expect((await entityConfiguration(issuerId)).status).toBe(404)
  })
})
