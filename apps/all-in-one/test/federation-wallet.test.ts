import type { FastifyInstance } from 'fastify'
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, listenAllInOneWorld } from './harness'
import { type LocalFederation, startLocalFederation } from './local-federation'
import { collectChain, resolvedMetadata, validateChain } from './wallet-federation'

// The superiors' policies, merged by the wallet from the anchor down (OpenID Federation 1.0 §6.1.4.1).
const ANCHOR_POLICY = {
  openid_credential_verifier: {
    vp_formats_supported: { essential: true },
    client_name: { default: 'Federated Verifier' },
  },
}
const INTERMEDIATE_POLICY = {
  openid_credential_verifier: {
    vp_formats_supported: { essential: true },
    contacts: { add: ['ops@federation.test'] },
  },
}

/**
 * Issue 39 item 4: a wallet-side check written from the OpenID Federation 1.0 text with jose alone
 * (wallet-federation.ts), never with the service's resolver: it resolves our entities' chains over
 * HTTP to the local federation's anchor and applies the superiors' metadata policy itself.
 */
describe('OpenID Federation 1.0, read by a wallet: our verifier and issuer chain to the anchor', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  let issuerId: string
  let verifierId: string
  let federation: LocalFederation
  let anchor: { entityId: string; jwks: JSONWebKeySet }
  const send = apiClient(
    () => baseUrl,
    () => auth,
  )
  const federationKeys = async (): Promise<{ keys: JWK[] }> => {
    const chain = (await send('GET', '/api/key-chains/federation')).body
    return { keys: [{ ...chain.activeKey.publicJwk, kid: chain.activeKey.kid }] }
  }

  beforeAll(async () => {
    const started = await listenAllInOneWorld('verifier-interop', {
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    app = started.app
    baseUrl = started.baseUrl
    auth = started.tenants.a.auth
    issuerId = started.tenants.a.issuer
    verifierId = started.tenants.a.verifier
    federation = await startLocalFederation({ anchorPolicy: ANCHOR_POLICY })
    anchor = { entityId: federation.anchorId, jwks: federation.anchorJwks }
    expect((await send('POST', '/api/key-chains', { source: 'generate', id: 'federation' })).status).toBe(201)
    const saved = await send('PUT', '/api/federation', {
      keyChainId: 'federation',
      authorityHints: [federation.intermediateId],
      trustAnchors: [anchor],
      lifetimeSeconds: 3600,
      organizationName: 'Wallet Check',
    })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const keys = await federationKeys()
    federation.enrol(verifierId, keys, { metadata_policy: INTERMEDIATE_POLICY })
    federation.enrol(issuerId, keys)
  })
  afterAll(async () => {
    await app.close()
    await federation.close()
  })

  it('§10.2, §6.1: the verifier’s chain (its configuration, the intermediate’s and the anchor’s statements, the anchor’s configuration) validates, and the merged policy resolves its openid_credential_verifier metadata', async () => {
    const chain = await collectChain(verifierId, federation.anchorId)
    expect(chain).toHaveLength(4)
    const statements = await validateChain(chain, anchor, new Date())
    expect(statements.map((es) => [es.iss, es.sub])).toStrictEqual([
      [verifierId, verifierId],
      [federation.intermediateId, verifierId],
      [federation.anchorId, federation.intermediateId],
      [federation.anchorId, federation.anchorId],
    ])
    const own = statements[0]?.metadata?.openid_credential_verifier as Record<string, unknown>
    const metadata = resolvedMetadata(statements, 'openid_credential_verifier')
    // default fills the absent client_name, add appends to the absent contacts, essential is met.
    expect(metadata).toStrictEqual({
      ...own,
      client_name: 'Federated Verifier',
      contacts: ['ops@federation.test'],
    })
    // "the public keys ... SHOULD NOT be used in other protocols" (§3, jwks).
    const federationKid = (await federationKeys()).keys[0]?.kid
    const requestKids = (metadata.jwks as JSONWebKeySet).keys.map((key) => key.kid)
    expect(requestKids.length).toBeGreaterThan(0)
    expect(requestKids).not.toContain(federationKid)
  })

  it('§10.2, §6.1: the issuer’s chain validates too; its openid_credential_issuer metadata names the issuer', async () => {
    const statements = await validateChain(
      await collectChain(issuerId, federation.anchorId),
      anchor,
      new Date(),
    )
    expect(resolvedMetadata(statements, 'openid_credential_issuer').credential_issuer).toBe(issuerId)
    expect(resolvedMetadata(statements, 'oauth_authorization_server').issuer).toBe(issuerId)
  })

  it('OpenID4VP 1.0 §5.9.3 and OpenID Federation 1.0 §4.3: the request object’s trust_chain header validates to the anchor, resolves to the same metadata, and its keys verify the request', async () => {
    const saved = await send('POST', '/api/presentations', {
      id: 'federated',
      dcqlQuery: {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:eudi:pid:1'] },
            claims: [{ path: ['given_name'] }],
          },
        ],
      },
      responseMode: 'direct_post',
      keyChainId: 'keys',
      clientIdPrefix: 'openid_federation',
    })
    expect(saved.status, JSON.stringify(saved.body)).toBe(201)
    const created = await send('POST', '/api/presentation-requests', { presentationConfigId: 'federated' })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const jwt = await (await fetch(created.body.requestUri)).text()
    const header = decodeProtectedHeader(jwt)
    // §4.3: "trust_chain ... an array of strings containing signed JWTs"; the first is the subject's configuration.
    const chain = header.trust_chain as string[]
    expect(Array.isArray(chain)).toBe(true)
    const statements = await validateChain(chain, anchor, new Date())
    expect(statements[0]?.sub).toBe(verifierId)
    const fromHeader = resolvedMetadata(statements, 'openid_credential_verifier')
    const fetched = resolvedMetadata(
      await validateChain(await collectChain(verifierId, federation.anchorId), anchor, new Date()),
      'openid_credential_verifier',
    )
    expect(fromHeader).toStrictEqual(fetched)
    // §5.9.3: the wallet takes the verifier's keys from the resolved chain, not from client_metadata.
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(fromHeader.jwks as JSONWebKeySet))
    expect(payload.client_id).toBe(`openid_federation:${verifierId}`)
    expect(decodeJwt(chain[0] as string).iss).toBe(verifierId)
  })

  it('the check can fail: another anchor’s keys, a statement about another subject, or a policy the metadata does not meet are refused', async () => {
    const chain = await collectChain(verifierId, federation.anchorId)
    const stranger = await generateKeyPair('ES256')
    const strangerJwks = {
      keys: [{ ...(await exportJWK(stranger.publicKey)), kid: 'anchor-1', alg: 'ES256' }],
    }
    await expect(validateChain(chain, { ...anchor, jwks: strangerJwks }, new Date())).rejects.toThrow()
    const issuerChain = await collectChain(issuerId, federation.anchorId)
    const swapped = [chain[0], issuerChain[1], ...chain.slice(2)] as string[]
    await expect(validateChain(swapped, anchor, new Date())).rejects.toThrow(
      /ES\[0\]\.iss is not ES\[1\]\.sub/,
    )
    // An hour and more later every statement has expired (exp = iat + 1 h at the federation).
    await expect(validateChain(chain, anchor, new Date(Date.now() + 2 * 3600_000))).rejects.toThrow(
      /iat\/exp/,
    )
    const statements = await validateChain(chain, anchor, new Date())
    const strict = statements.map((es, index) =>
      index === 1
        ? {
            ...es,
            metadata_policy: { openid_credential_verifier: { client_uri: { essential: true } } },
          }
        : es,
    )
    expect(() => resolvedMetadata(strict, 'openid_credential_verifier')).toThrow(/essential/)
  })

  it('§3 jwks, "the public keys ... SHOULD NOT be used in other protocols": an access token signed with the federation key is refused at the credential endpoint; one signed with another key chain of the tenant gets past the signature check', async () => {
    // Key chains whose private keys the test knows; the membership then names one of them.
    const known = async (id: string) => {
      const pair = await generateKeyPair('ES256', { extractable: true })
      const privateKey = await exportJWK(pair.privateKey)
      const created = await send('POST', '/api/key-chains', { source: 'import', id, privateKey })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      return { key: pair.privateKey, kid: created.body.activeKey.kid as string }
    }
    const entityKey = await known('federation-known')
    const otherKey = await known('other-known')
    const moved = await send('PUT', '/api/federation', {
      keyChainId: 'federation-known',
      authorityHints: [federation.intermediateId],
      trustAnchors: [anchor],
    })
    expect(moved.status, JSON.stringify(moved.body)).toBe(200)
    const answerTo = async (signer: Awaited<ReturnType<typeof known>>) => {
      const token = await new SignJWT({ credential_configuration_ids: ['pid'] })
        .setProtectedHeader({ alg: 'ES256', kid: signer.kid, typ: 'at+jwt' })
        .setIssuer(issuerId)
        .setAudience(issuerId)
        .setSubject('no-such-session')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(signer.key)
      const answer = await fetch(`${issuerId}/credential`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ credential_configuration_id: 'pid' }),
      })
      return `${answer.status} ${answer.headers.get('www-authenticate') ?? ''}`
    }
    expect(await answerTo(entityKey)).toContain('the access token is invalid or expired')
    expect(await answerTo(otherKey)).not.toContain('the access token is invalid or expired')
  })
})
