import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FederationTrustError } from './entity-statement'
import { resolveTrustChain } from './resolve-trust-chain'
import { verifyTrustChain } from './trust-chain'

// A local federation served over HTTP on loopback: a trust anchor, an intermediate, a trust mark
// issuer and a leaf (a credential issuer). Every statement is built here with jose from the text
// of OpenID Federation 1.0 (§3 claims, §8.1 fetch endpoint, §9 well-known path), not by the code
// under test.
type Key = { privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']; jwk: JWK }
const newKey = async (kid: string): Promise<Key> => {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } }
}
const now = () => Math.floor(Date.now() / 1000)

let server: Server
let base: string
const routes = new Map<string, () => Promise<string>>()
const keys: Record<string, Key> = {}
const id = (name: string) => `${base}/${name}`

async function statement(
  issuer: string,
  subject: string,
  claims: Record<string, unknown>,
  options: { key?: Key; typ?: string; iat?: number; exp?: number } = {},
): Promise<string> {
  const key = options.key ?? (keys[issuer] as Key)
  return new SignJWT({ jwks: { keys: [(keys[subject] as Key).jwk] }, ...claims })
    .setProtectedHeader({
      alg: 'ES256',
      kid: key.jwk.kid as string,
      typ: options.typ ?? 'entity-statement+jwt',
    })
    .setIssuer(id(issuer))
    .setSubject(id(subject))
    .setIssuedAt(options.iat ?? now() - 10)
    .setExpirationTime(options.exp ?? now() + 3600)
    .sign(key.privateKey)
}

const federationEntity = (name: string) => ({
  federation_entity: { federation_fetch_endpoint: `${id(name)}/fetch`, organization_name: name },
})

/** The default federation; each test may replace a route. */
function standardFederation(overrides: Record<string, () => Promise<string>> = {}) {
  routes.clear()
  routes.set('/ta/.well-known/openid-federation', () =>
    statement('ta', 'ta', {
      metadata: federationEntity('ta'),
      trust_mark_issuers: { 'https://marks.example/pid-provider': [id('tmi')] },
    }),
  )
  routes.set('/ta/fetch?sub=int', () =>
    statement('ta', 'int', {
      metadata_policy: {
        openid_credential_issuer: {
          credential_signing_alg_values_supported: { subset_of: ['ES256', 'ES384'] },
        },
      },
      constraints: { max_path_length: 1 },
    }),
  )
  routes.set('/ta/fetch?sub=tmi', () => statement('ta', 'tmi', {}))
  routes.set('/tmi/.well-known/openid-federation', () =>
    statement('tmi', 'tmi', { metadata: federationEntity('tmi'), authority_hints: [id('ta')] }),
  )
  routes.set('/int/.well-known/openid-federation', () =>
    statement('int', 'int', { metadata: federationEntity('int'), authority_hints: [id('ta')] }),
  )
  routes.set('/int/fetch?sub=leaf', () =>
    statement('int', 'leaf', {
      metadata_policy: { openid_credential_issuer: { display: { essential: true } } },
    }),
  )
  routes.set('/leaf/.well-known/openid-federation', async () =>
    statement('leaf', 'leaf', {
      authority_hints: [id('int')],
      metadata: {
        openid_credential_issuer: {
          credential_issuer: id('leaf'),
          credential_signing_alg_values_supported: ['ES256', 'EdDSA'],
          display: [{ name: 'Leaf' }],
        },
      },
      trust_marks: [
        { trust_mark_type: 'https://marks.example/pid-provider', trust_mark: await trustMark('tmi') },
      ],
    }),
  )
  for (const [path, build] of Object.entries(overrides)) routes.set(path, build)
}

const trustMark = (issuer: string, subject = 'leaf', claims: Record<string, unknown> = {}) =>
  new SignJWT({ trust_mark_type: 'https://marks.example/pid-provider', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: (keys[issuer] as Key).jwk.kid as string, typ: 'trust-mark+jwt' })
    .setIssuer(id(issuer))
    .setSubject(id(subject))
    .setIssuedAt(now() - 10)
    .setExpirationTime(typeof claims.exp === 'number' ? claims.exp : now() + 3600)
    .sign((keys[issuer] as Key).privateKey)

const fetchText = async (url: string) => {
  const answer = await fetch(url)
  if (!answer.ok) throw new Error(`HTTP ${answer.status}`)
  return answer.text()
}
const anchors = () => [{ entityId: id('ta'), jwks: { keys: [(keys.ta as Key).jwk] } }]
const resolve = (options: { requiredTrustMarks?: string[] } = {}) =>
  resolveTrustChain(id('leaf'), { anchors: anchors(), now: new Date(), fetch: fetchText, ...options })

beforeAll(async () => {
  for (const name of ['ta', 'int', 'int2', 'tmi', 'leaf', 'rogue']) keys[name] = await newKey(`${name}-key`)
  server = createServer((req, res) => {
    // The fetch endpoint's sub is a whole entity identifier (§8.1.1); routes name its last segment.
    const url = new URL(req.url ?? '/', 'http://localhost')
    const sub = url.searchParams.get('sub')
    const build = routes.get(sub ? `${url.pathname}?sub=${sub.split('/').pop()}` : url.pathname)
    if (!build) {
      res.writeHead(404).end()
      return
    }
    build().then((jwt) => res.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(jwt))
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((done) => server.close(() => done())))

describe('OpenID Federation 1.0 trust chains', () => {
  it('§10: resolves leaf → intermediate → anchor and applies the merged metadata policy (§6.1.4)', async () => {
    standardFederation()
    const result = await resolve({ requiredTrustMarks: ['https://marks.example/pid-provider'] })
    expect(result.subject).toBe(id('leaf'))
    expect(result.anchor).toBe(id('ta'))
    expect(result.statements).toHaveLength(4)
    // The anchor's subset_of drops EdDSA; the intermediate's essential display is met.
    expect(result.metadata.openid_credential_issuer).toStrictEqual({
      credential_issuer: id('leaf'),
      credential_signing_alg_values_supported: ['ES256'],
      display: [{ name: 'Leaf' }],
    })
    expect(result.expiresAt.getTime()).toBeLessThanOrEqual((now() + 3600) * 1000)
  })

  it('§4.3: a trust_chain as a JWS header carries it (with or without the anchor configuration) and verifies alone', async () => {
    standardFederation()
    const { statements } = await resolve()
    const full = await verifyTrustChain(statements, { anchors: anchors(), now: new Date() })
    expect(full.subject).toBe(id('leaf'))
    const short = await verifyTrustChain(statements.slice(0, 3), { anchors: anchors(), now: new Date() })
    expect(short.metadata).toStrictEqual(full.metadata)
    // Another deployment's anchor: not trusted.
    await expect(
      verifyTrustChain(statements, {
        anchors: [{ entityId: id('int'), jwks: { keys: [] } }],
        now: new Date(),
      }),
    ).rejects.toThrow(/does not end at a configured trust anchor/)
  })

  it('§3.2: an expired subordinate statement is refused', async () => {
    standardFederation({
      '/int/fetch?sub=leaf': () => statement('int', 'leaf', {}, { iat: now() - 7200, exp: now() - 3600 }),
    })
    await expect(resolve()).rejects.toThrow(/statement of .*\/int about .*\/leaf has expired/)
  })

  it('each refusal names its kind: expired statement, policy violation, missing trust mark, broken chain', async () => {
    const kindOf = (pending: Promise<unknown>) =>
      pending.then(
        () => 'resolved',
        (error: unknown) => (error instanceof FederationTrustError ? error.kind : 'other'),
      )
    standardFederation({
      '/int/fetch?sub=leaf': () => statement('int', 'leaf', {}, { iat: now() - 7200, exp: now() - 3600 }),
    })
    expect(await kindOf(resolve())).toBe('expired-statement')
    standardFederation({
      '/int/fetch?sub=leaf': () =>
        statement('int', 'leaf', {
          metadata_policy: {
            openid_credential_issuer: { credential_issuer: { one_of: ['https://x.example'] } },
          },
        }),
    })
    expect(await kindOf(resolve())).toBe('policy-violation')
    standardFederation({
      '/leaf/.well-known/openid-federation': () =>
        statement('leaf', 'leaf', {
          authority_hints: [id('int')],
          metadata: { openid_credential_issuer: { display: [{ name: 'Leaf' }] } },
        }),
    })
    expect(await kindOf(resolve({ requiredTrustMarks: ['https://marks.example/pid-provider'] }))).toBe(
      'missing-trust-mark',
    )
    standardFederation({ '/int/fetch?sub=leaf': () => statement('int', 'leaf', {}, { typ: 'JWT' }) })
    expect(await kindOf(resolve())).toBe('broken-chain')
  })

  it('§10.4: a chain relying on a required trust mark is kept only until that mark expires', async () => {
    const soon = now() + 600
    const mark = await trustMark('tmi', 'leaf', { exp: soon })
    standardFederation({
      '/leaf/.well-known/openid-federation': () =>
        statement('leaf', 'leaf', {
          authority_hints: [id('int')],
          metadata: { openid_credential_issuer: { display: [{ name: 'Leaf' }] } },
          trust_marks: [{ trust_mark_type: 'https://marks.example/pid-provider', trust_mark: mark }],
        }),
    })
    const marked = await resolve({ requiredTrustMarks: ['https://marks.example/pid-provider'] })
    expect(marked.expiresAt.getTime()).toBe(soon * 1000)
    // Not required, the mark does not bound the chain.
    expect((await resolve()).expiresAt.getTime()).toBeGreaterThan(soon * 1000)
  })

  it('§3.2: a statement signed with a key its issuer does not hold is refused', async () => {
    standardFederation({
      '/int/fetch?sub=leaf': () =>
        statement(
          'int',
          'leaf',
          {},
          { key: { ...(keys.rogue as Key), jwk: { ...(keys.rogue as Key).jwk, kid: 'int-key' } } },
        ),
    })
    await expect(resolve()).rejects.toThrow(
      /signature of the statement of .*\/int about .*\/leaf does not verify/,
    )
  })

  it('§3.2: a statement without typ entity-statement+jwt is refused', async () => {
    standardFederation({ '/int/fetch?sub=leaf': () => statement('int', 'leaf', {}, { typ: 'JWT' }) })
    await expect(resolve()).rejects.toThrow(/does not have typ entity-statement\+jwt/)
  })

  it('§6.1: metadata against the policy (essential parameter absent) is refused', async () => {
    standardFederation({
      '/leaf/.well-known/openid-federation': () =>
        statement('leaf', 'leaf', {
          authority_hints: [id('int')],
          metadata: { openid_credential_issuer: { credential_issuer: id('leaf') } },
        }),
    })
    await expect(resolve()).rejects.toThrow(
      /openid_credential_issuer.display: an essential parameter is absent/,
    )
  })

  it('§6.1.4.1: a subordinate policy conflicting with its superior is refused', async () => {
    standardFederation({
      '/int/fetch?sub=leaf': () =>
        statement('int', 'leaf', {
          metadata_policy: {
            openid_credential_issuer: { credential_signing_alg_values_supported: { add: ['RS256'] } },
          },
        }),
    })
    await expect(resolve()).rejects.toThrow(/add must be a subset of subset_of/)
  })

  it('§7.3: a required trust mark that is missing, from an issuer the anchor does not accredit, or about another entity is refused', async () => {
    const required = { requiredTrustMarks: ['https://marks.example/pid-provider'] }
    const leafWith = (marks: unknown[]) => () =>
      statement('leaf', 'leaf', {
        authority_hints: [id('int')],
        metadata: { openid_credential_issuer: { display: [{ name: 'Leaf' }] } },
        trust_marks: marks,
      })
    standardFederation({ '/leaf/.well-known/openid-federation': leafWith([]) })
    await expect(resolve(required)).rejects.toThrow(
      /has no trust mark of type https:\/\/marks.example\/pid-provider/,
    )
    const byInt = await trustMark('int')
    standardFederation({
      '/leaf/.well-known/openid-federation': leafWith([
        { trust_mark_type: 'https://marks.example/pid-provider', trust_mark: byInt },
      ]),
    })
    await expect(resolve(required)).rejects.toThrow(
      /\/int is not an issuer of https:\/\/marks.example\/pid-provider trust marks/,
    )
    const aboutOther = await trustMark('tmi', 'int')
    standardFederation({
      '/leaf/.well-known/openid-federation': leafWith([
        { trust_mark_type: 'https://marks.example/pid-provider', trust_mark: aboutOther },
      ]),
    })
    await expect(resolve(required)).rejects.toThrow(/trust mark is about another entity/)
  })

  it('§6.2.1: a chain longer than an anchor’s max_path_length is refused', async () => {
    standardFederation({
      '/ta/fetch?sub=int': () => statement('ta', 'int', { constraints: { max_path_length: 0 } }),
    })
    await expect(resolve()).rejects.toThrow(/1 intermediates below .*\/ta, whose max_path_length is 0/)
  })

  it('§6.2.2: an entity outside the naming constraints is refused', async () => {
    standardFederation({
      '/ta/fetch?sub=int': () =>
        statement('ta', 'int', { constraints: { naming_constraints: { permitted: ['.example.org'] } } }),
    })
    await expect(resolve()).rejects.toThrow(/outside the permitted naming constraints/)
  })

  it('§10: authority hints in a loop, or a path past the bound, fail closed with the reason', async () => {
    standardFederation({
      '/int/.well-known/openid-federation': () =>
        statement('int', 'int', { metadata: federationEntity('int'), authority_hints: [id('int2')] }),
      '/int2/.well-known/openid-federation': () =>
        statement('int2', 'int2', { metadata: federationEntity('int2'), authority_hints: [id('int')] }),
      '/int2/fetch?sub=int': () => statement('int2', 'int', {}),
      '/int/fetch?sub=int2': () => statement('int', 'int2', {}),
    })
    await expect(resolve()).rejects.toThrow(/a loop through .*\/int/)
    const error = await resolveTrustChain(id('leaf'), {
      anchors: anchors(),
      now: new Date(),
      fetch: fetchText,
      maxIntermediates: 0,
    }).catch((failure: unknown) => failure)
    expect(error).toBeInstanceOf(FederationTrustError)
    expect((error as Error).message).toMatch(/longer than 0 intermediates/)
  })
})
