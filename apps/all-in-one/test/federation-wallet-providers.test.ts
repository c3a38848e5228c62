import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attester, type KeyPair, keyPair, sign } from './attestation-fixtures'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { type LocalFederation, startLocalFederation } from './local-federation'

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'

/** A wallet provider as a federation leaf entity, made here with jose (never the service's code). */
interface ProviderEntity {
  id: string
  federationKey: KeyPair
  attestationKey: KeyPair
}

let federation: LocalFederation
let leaves: Server
let leafBase = ''
const served = new Map<string, ProviderEntity>()

const entityConfiguration = (entity: ProviderEntity) =>
  sign(
    entity.federationKey,
    { typ: 'entity-statement+jwt', kid: entity.federationKey.publicJwk.kid },
    {
      iss: entity.id,
      sub: entity.id,
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 3600,
      jwks: { keys: [entity.federationKey.publicJwk] },
      authority_hints: [federation.intermediateId],
      metadata: {
        wallet_provider: { jwks: { keys: [entity.attestationKey.publicJwk] } },
        federation_entity: { organization_name: 'Test wallet provider' },
      },
    },
  )

/** A wallet provider entity enrolled under the intermediate; served over HTTP when `serve`. */
async function provider(name: string, serve: boolean): Promise<ProviderEntity> {
  const federationKey = await keyPair()
  const attestationKey = await keyPair()
  federationKey.publicJwk = { ...federationKey.publicJwk, kid: `${name}-federation`, alg: 'ES256' }
  attestationKey.publicJwk = { ...attestationKey.publicJwk, kid: `${name}-attestation`, alg: 'ES256' }
  const entity = { id: `${leafBase}/${name}`, federationKey, attestationKey }
  federation.enrol(entity.id, { keys: [federationKey.publicJwk] })
  if (serve) served.set(name, entity)
  return entity
}

/** §4: the provider's configuration, the statements of the intermediate and the anchor, the anchor's configuration. */
async function trustChain(entity: ProviderEntity): Promise<string[]> {
  const get = async (url: string) => (await fetch(url)).text()
  return [
    await entityConfiguration(entity),
    await get(`${federation.intermediateId}/fetch?sub=${encodeURIComponent(entity.id)}`),
    await get(`${federation.anchorId}/fetch?sub=${encodeURIComponent(federation.intermediateId)}`),
    await get(`${federation.anchorId}/.well-known/openid-federation`),
  ]
}

/** A trust list of source type openid-federation for the local anchor, named by the wallet provider `federated`. */
async function trustFederatedProvider(app: FastifyInstance, admin: Record<string, string>) {
  const list = await app.inject({
    method: 'POST',
    url: '/api/trust-lists',
    headers: admin,
    payload: {
      id: 'fed-wallets',
      source: { type: 'openid-federation', trustAnchor: federation.anchorId, jwks: federation.anchorJwks },
    },
  })
  expect(list.statusCode, list.body).toBe(201)
  const saved = await app.inject({
    method: 'POST',
    url: '/api/wallet-providers',
    headers: admin,
    payload: { id: 'federated', name: 'Federated wallets', trustListIds: ['fed-wallets'] },
  })
  expect(saved.statusCode, saved.body).toBe(201)
}

beforeAll(async () => {
  federation = await startLocalFederation()
  leaves = createServer((req, res) => {
    const name = /^\/([^/]+)\/\.well-known\/openid-federation$/.exec(req.url ?? '')?.[1]
    const entity = name ? served.get(name) : undefined
    if (!entity) return void res.writeHead(404).end()
    entityConfiguration(entity).then((jwt) =>
      res.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(jwt),
    )
  })
  await new Promise<void>((done) => leaves.listen(0, '127.0.0.1', done))
  leafBase = `http://127.0.0.1:${(leaves.address() as AddressInfo).port}`
})
afterAll(async () => {
  await federation?.close()
  await new Promise<void>((done) => (leaves ? leaves.close(() => done()) : done()))
})

/**
 * Wallet providers trusted through OpenID Federation 1.0 (issue 39): a wallet provider naming a
 * trust list of source type openid-federation accepts wallet attestations without x5c whose
 * attester (`iss`) has a trust chain to the anchor, sent in the `trust_chain` JOSE header (§4.3)
 * or resolved from `iss`; its `wallet_provider` metadata names the attestation keys.
 */
describe('OpenID Federation 1.0: wallet attestations trusted through a federation (ABCA -07, I-48)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let admin: Record<string, string>
  let tenant: string
  let issuer: string

  async function attestation(entity: ProviderEntity, header: Record<string, unknown> = {}, signer?: KeyPair) {
    const instance = await keyPair()
    const now = Math.floor(Date.now() / 1000)
    const jwt = await sign(
      signer ?? entity.attestationKey,
      { typ: 'oauth-client-attestation+jwt', kid: entity.attestationKey.publicJwk.kid, ...header },
      { iss: entity.id, sub: 'wallet-client', exp: now + 600, iat: now, cnf: { jwk: instance.publicJwk } },
    )
    const pop = await sign(
      instance,
      { typ: 'oauth-client-attestation-pop+jwt' },
      { iss: 'wallet-client', aud: issuer, jti: randomBytes(12).toString('base64url'), iat: now },
    )
    return { 'oauth-client-attestation': jwt, 'oauth-client-attestation-pop': pop }
  }

  async function tokenRequest(headers: Record<string, string>) {
    const offered = await app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: admin,
      payload: { credentialConfigurationIds: ['haip'], claims: { haip: { given_name: 'Erika' } } },
    })
    expect(offered.statusCode, offered.body).toBe(201)
    const code = offered.json().credentialOffer.grants[PRE_AUTH]['pre-authorized_code']
    const nonce = (await app.inject({ method: 'POST', url: `/issuers/${tenant}/nonce` })).headers[
      'dpop-nonce'
    ]
    const holder = await keyPair()
    const dpop = await sign(
      holder,
      { typ: 'dpop+jwt', jwk: holder.publicJwk },
      {
        htm: 'POST',
        htu: `${issuer}/token`,
        iat: Math.floor(Date.now() / 1000),
        jti: randomBytes(12).toString('base64url'),
        nonce,
      },
    )
    return app.inject({
      method: 'POST',
      url: `/issuers/${tenant}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop, ...headers },
      payload: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }).toString(),
    })
  }

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    const anchors = await attester('Unused Wallet')
    const started = await startAllInOneWorld(testDatabases().at(-1) as TestDatabase, 'haip', baseUrl, {
      TRUSTED_WALLET_ANCHOR: anchors.rootPem,
      CHAINED_WALLET_ANCHOR: anchors.rootPem,
      B_WALLET_ANCHOR: anchors.rootPem,
      // The local federation listens on loopback, which the outbound policy refuses unless allowed.
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    tenant = started.tenants.a.id
    admin = started.tenants.a.auth
    issuer = `${baseUrl}/issuers/${tenant}`
    await trustFederatedProvider(app, admin)
  }, 60_000)
  afterAll(async () => {
    await app?.close()
  })

  it('OpenID Federation 1.0 §4.3: a wallet attestation carrying its trust_chain to the anchor is accepted (the provider is not even reachable)', async () => {
    const offline = await provider('offline', false)
    const response = await tokenRequest(
      await attestation(offline, { trust_chain: await trustChain(offline) }),
    )
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json().token_type).toBe('DPoP')
  })

  it('§10: without trust_chain, the attester is resolved from its iss through the intermediate to the anchor', async () => {
    const online = await provider('online', true)
    const response = await tokenRequest(await attestation(online))
    expect(response.statusCode, response.body).toBe(200)
  })

  it('§4: a trust_chain that does not end at the configured anchor is 401 invalid_client naming the broken chain', async () => {
    const loose = await provider('loose', false)
    const [configuration] = await trustChain(loose)
    const response = await tokenRequest(await attestation(loose, { trust_chain: [configuration] }))
    expect(response.statusCode).toBe(401)
    expect(response.json()).toStrictEqual({
      error: 'invalid_client',
      error_description: `the client attestation is refused: wallet provider 'federated': the attester ${loose.id} is not trusted through OpenID Federation: trust source 'fed-wallets' (broken chain): the trust chain does not end at a configured trust anchor (${loose.id})`,
    })
  })

  it('§4.3: a trust_chain of another entity than the attester is refused', async () => {
    const other = await provider('other', false)
    const impostor = await provider('impostor', false)
    const response = await tokenRequest(await attestation(impostor, { trust_chain: await trustChain(other) }))
    expect(response.statusCode).toBe(401)
    expect(response.json().error_description).toContain(
      `(broken chain): the trust_chain is about ${other.id}, not ${impostor.id}`,
    )
  })

  it('an attestation signed with a key the wallet_provider metadata does not name is refused', async () => {
    const online = await provider('online-2', true)
    const response = await tokenRequest(await attestation(online, {}, await keyPair()))
    expect(response.statusCode).toBe(401)
    expect(response.json().error).toBe('invalid_client')
    expect(response.json().error_description).toContain(`with the wallet_provider keys of ${online.id}`)
  })
})

/**
 * Key attestations (OpenID4VCI 1.0 Appendix D.1, F.3) from a wallet provider trusted through the
 * federation: no x5c, the attester's chain in `trust_chain`, its key named by `kid`.
 */
describe('OpenID Federation 1.0: key attestations trusted through a federation (OpenID4VCI 1.0 Appendix D, I-65)', () => {
  let app: FastifyInstance
  let admin: Record<string, string>
  let tenant: string

  beforeAll(async () => {
    const port = await freePort()
    const started = await startAllInOneWorld(
      testDatabases().at(-1) as TestDatabase,
      'key-attestation',
      `http://127.0.0.1:${port}`,
      {
        TRUSTED_WALLET_ANCHOR: (await attester('Unused Wallet')).rootPem,
        B_WALLET_ANCHOR: (await attester('Wallet of B')).rootPem,
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      },
    )
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    tenant = started.tenants.a.id
    admin = started.tenants.a.auth
    await trustFederatedProvider(app, admin)
  }, 60_000)
  afterAll(async () => {
    await app?.close()
  })

  async function credentialWith(attestationJwt: string) {
    const offered = await app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: admin,
      payload: { credentialConfigurationIds: ['attested'], claims: { attested: { given_name: 'Erika' } } },
    })
    const code = offered.json().credentialOffer.grants[PRE_AUTH]['pre-authorized_code']
    const token = await app.inject({
      method: 'POST',
      url: `/issuers/${tenant}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }).toString(),
    })
    return app.inject({
      method: 'POST',
      url: `/issuers/${tenant}/credential`,
      headers: { authorization: `Bearer ${token.json().access_token}` },
      payload: { credential_configuration_id: 'attested', proofs: { attestation: [attestationJwt] } },
    })
  }

  async function keyAttestation(entity: ProviderEntity, header: Record<string, unknown>) {
    const nonce = (await app.inject({ method: 'POST', url: `/issuers/${tenant}/nonce` })).json().c_nonce
    const now = Math.floor(Date.now() / 1000)
    const attested = await keyPair()
    return {
      attested,
      jwt: await sign(
        entity.attestationKey,
        { typ: 'key-attestation+jwt', kid: entity.attestationKey.publicJwk.kid, ...header },
        {
          iss: entity.id,
          iat: now,
          exp: now + 600,
          nonce,
          attested_keys: [attested.publicJwk],
          key_storage: ['iso_18045_high'],
          user_authentication: ['iso_18045_high'],
        },
      ),
    }
  }

  it('§4.3: a key attestation with its trust_chain to the anchor binds the credential to the attested key', async () => {
    const entity = await provider('key-attester', false)
    const { attested, jwt } = await keyAttestation(entity, { trust_chain: await trustChain(entity) })
    const response = await credentialWith(jwt)
    expect(response.statusCode, response.body).toBe(200)
    const [issued] = response.json().credentials as { credential: string }[]
    const cnf = decodeJwt((issued as { credential: string }).credential.split('~')[0] as string).cnf as {
      jwk: { x: string }
    }
    expect(cnf.jwk.x).toBe(attested.publicJwk.x)
  })

  it('§4: a key attestation whose trust_chain stops short of the anchor is invalid_proof naming the broken chain', async () => {
    const entity = await provider('short-key-attester', false)
    const [configuration] = await trustChain(entity)
    const { jwt } = await keyAttestation(entity, { trust_chain: [configuration] })
    const response = await credentialWith(jwt)
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toBe('invalid_proof')
    expect(response.json().error_description).toContain(`trust source 'fed-wallets' (broken chain)`)
  })
})
