import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'

/**
 * A faithful local OpenID Federation served over HTTP on loopback for the tests: a trust anchor
 * and an intermediate, each with its entity configuration at `/.well-known/openid-federation`
 * (§9) and a fetch endpoint (§8.1). Keys and statements are made here with jose from the text of
 * OpenID Federation 1.0, never by the service's code.
 */
export interface LocalFederation {
  base: string
  anchorId: string
  intermediateId: string
  anchorJwks: { keys: JWK[] }
  /** Registers the subordinate statement the intermediate gives about `subject` (its federation keys). */
  enrol(subject: string, jwks: { keys: JWK[] }, claims?: Record<string, unknown>): void
  /** A trust mark of `type` the anchor issues about `subject` (§7.1). */
  trustMark(subject: string, type: string): Promise<string>
  close(): Promise<void>
}

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>

export async function startLocalFederation(
  options: { anchorPolicy?: Record<string, unknown> } = {},
): Promise<LocalFederation> {
  const anchorKey = await generateKeyPair('ES256')
  const intermediateKey = await generateKeyPair('ES256')
  const publicJwk = async (pair: KeyPair, kid: string): Promise<JWK> => ({
    ...(await exportJWK(pair.publicKey)),
    kid,
    alg: 'ES256',
  })
  const anchorJwk = await publicJwk(anchorKey, 'anchor-1')
  const intermediateJwk = await publicJwk(intermediateKey, 'intermediate-1')
  const subordinates = new Map<string, { jwks: { keys: JWK[] }; claims: Record<string, unknown> }>()
  let base = ''
  const anchorId = () => `${base}/anchor`
  const intermediateId = () => `${base}/intermediate`

  const sign = (
    key: KeyPair,
    kid: string,
    typ: string,
    claims: Record<string, unknown>,
    iss: string,
    sub: string,
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid, typ })
      .setIssuer(iss)
      .setSubject(sub)
      .setIssuedAt()
      // An `exp` among the claims (an expired statement) wins over the default lifetime.
      .setExpirationTime(typeof claims.exp === 'number' ? claims.exp : '1h')
      .sign(key.privateKey)
  const fetchEndpoint = (entity: string) => ({
    federation_entity: { federation_fetch_endpoint: `${entity}/fetch` },
  })

  const answer = async (path: string, sub: string | null): Promise<string | undefined> => {
    if (path === '/anchor/.well-known/openid-federation')
      return sign(
        anchorKey,
        'anchor-1',
        'entity-statement+jwt',
        {
          jwks: { keys: [anchorJwk] },
          metadata: fetchEndpoint(anchorId()),
          trust_mark_issuers: { 'https://marks.test/verified-rp': [] },
        },
        anchorId(),
        anchorId(),
      )
    if (path === '/anchor/fetch' && sub === intermediateId())
      return sign(
        anchorKey,
        'anchor-1',
        'entity-statement+jwt',
        {
          jwks: { keys: [intermediateJwk] },
          ...(options.anchorPolicy ? { metadata_policy: options.anchorPolicy } : {}),
        },
        anchorId(),
        sub,
      )
    if (path === '/intermediate/.well-known/openid-federation')
      return sign(
        intermediateKey,
        'intermediate-1',
        'entity-statement+jwt',
        {
          jwks: { keys: [intermediateJwk] },
          metadata: fetchEndpoint(intermediateId()),
          authority_hints: [anchorId()],
        },
        intermediateId(),
        intermediateId(),
      )
    const enrolled = sub ? subordinates.get(sub) : undefined
    if (path === '/intermediate/fetch' && sub && enrolled)
      return sign(
        intermediateKey,
        'intermediate-1',
        'entity-statement+jwt',
        { jwks: enrolled.jwks, ...enrolled.claims },
        intermediateId(),
        sub,
      )
    return undefined
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    answer(url.pathname, url.searchParams.get('sub')).then((jwt) => {
      if (jwt === undefined) res.writeHead(404).end()
      else res.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(jwt)
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    base,
    anchorId: anchorId(),
    intermediateId: intermediateId(),
    anchorJwks: { keys: [anchorJwk] },
    enrol: (subject, jwks, claims = {}) => subordinates.set(subject, { jwks, claims }),
    trustMark: (subject, type) =>
      sign(anchorKey, 'anchor-1', 'trust-mark+jwt', { trust_mark_type: type }, anchorId(), subject),
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}
