import { createHash, randomBytes } from 'node:crypto'
import { createServer as createHttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestDatabase } from '@credential-service/db-schema/testing'
import { clientAuthenticationNone } from '@openid4vc/oauth2'
import { Openid4vciClient } from '@openid4vc/openid4vci'
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'

// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
export type Loose = any

/**
 * A wallet of oid4vc-ts (someone else's reading of OpenID4VCI 1.0) holding ES256 keys: `publicJwk`,
 * and more from `addKey()` for the proofs of a batch; it signs with the key a JWT names.
 */
export async function interopWallet() {
  const privateKeys = new Map<string, Parameters<SignJWT['sign']>[0]>()
  const addKey = async (): Promise<JWK> => {
    const pair = await generateKeyPair('ES256')
    const jwk = await exportJWK(pair.publicKey)
    privateKeys.set(jwk.x as string, pair.privateKey)
    return jwk
  }
  const publicJwk = await addKey()
  const client = new Openid4vciClient({
    callbacks: {
      clientAuthentication: clientAuthenticationNone({ clientId: 'interop-wallet' }),
      hash: (data, alg) => new Uint8Array(createHash(alg.replace('-', '')).update(data).digest()),
      generateRandom: (length) => new Uint8Array(randomBytes(length)),
      signJwt: async (signer, { header, payload }) => {
        const named = signer.method === 'jwk' ? (signer.publicJwk as JWK) : publicJwk
        const jwk = privateKeys.has(named.x as string) ? named : publicJwk
        return {
          jwt: await new SignJWT(payload)
            .setProtectedHeader(header as never)
            .sign(privateKeys.get(jwk.x as string) as Parameters<SignJWT['sign']>[0]),
          signerJwk: jwk as never,
        }
      },
    },
  })
  return { client, publicJwk, addKey }
}

/**
 * An attribute provider over real HTTP: answers each call with the next scripted answer (the last
 * one repeats): `pending` is HTTP 202 `{"status":"pending","interval":1}` (`pending:2` suggests 2 s),
 * a number is that HTTP status, an object is HTTP 200 claims. `delay` holds each answer back.
 */
export async function startAttributeProvider() {
  let script: (Record<string, unknown> | 'pending' | `pending:${number}` | number)[] = ['pending']
  let delayMs = 0
  const calls: Loose[] = []
  const server = createHttpServer((req, res) => {
    let raw = ''
    req.on('data', (chunk) => {
      raw += chunk
    })
    req.on('end', async () => {
      calls.push(JSON.parse(raw))
      const answer = script.length > 1 ? script.shift() : script[0]
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs))
      if (typeof answer === 'string') {
        res.writeHead(202, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ status: 'pending', interval: Number(answer.split(':')[1] ?? 1) }))
      } else if (typeof answer === 'number') {
        res.writeHead(answer).end()
      } else {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(answer))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/claims`,
    calls,
    answer: (...next: typeof script) => {
      script = next
    },
    delay: (ms: number) => {
      delayMs = ms
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

export interface IssuerFixture {
  app: FastifyInstance
  baseUrl: string
  tenant: string
  issuer: string
  admin: Record<string, string>
  root: Record<string, string>
  provider: Awaited<ReturnType<typeof startAttributeProvider>>
  post: (url: string, body: unknown, headers?: Record<string, string>) => Promise<Response>
  /** Offer → token; the access token and session id. */
  /** The token response of a pre-authorized offer of `configurationId` (`refreshToken` when it has `refreshTokens`). */
  redeem: (
    configurationId: string,
  ) => Promise<{ accessToken: string; sessionId: string; refreshToken?: string }>
  nonce: () => Promise<string>
  proof: (nonce: string, key?: HolderKey) => Promise<string>
  close: () => Promise<void>
}

/**
 * The all-in-one service listening on loopback over the `deferred` world, as its tenant `a`: `pid` (offer claims, batch 2) and
 * `deferred-pid` (claims from the attribute provider, batch 2, status list entries).
 */
export async function startIssuerFixture(testDatabase: TestDatabase): Promise<IssuerFixture> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const provider = await startAttributeProvider()
  // The `deferred` world (test/worlds/deferred): its attribute provider `hr` is this one.
  const started = await startAllInOneWorld(testDatabase, 'deferred', baseUrl, {
    OUTBOUND_ALLOW_HTTP: 'true',
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    ATTRIBUTE_PROVIDER_URL: provider.url,
  })
  const app = started.app
  await app.listen({ host: '127.0.0.1', port })
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  const json = async (response: Promise<Response>): Promise<Loose> => (await response).json()
  const { root } = started
  const tenant = started.tenants.a.id
  const admin = started.tenants.a.auth
  const issuer = `${baseUrl}/issuers/${tenant}`

  return {
    app,
    baseUrl,
    tenant,
    issuer,
    admin,
    root,
    provider,
    post,
    async redeem(configurationId) {
      const offer = await json(
        post(
          '/api/offers',
          {
            credentialConfigurationIds: [configurationId],
            ...(configurationId === 'pid'
              ? { claims: { pid: { given_name: 'Erika', family_name: 'Mustermann' } } }
              : {}),
          },
          admin,
        ),
      )
      const code =
        offer.credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'][
          'pre-authorized_code'
        ]
      const answer = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': code,
        }).toString(),
      })
      const tokens = (await answer.json()) as Loose
      return {
        accessToken: tokens.access_token,
        sessionId: offer.sessionId,
        ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
      }
    },
    async nonce() {
      return (await json(post(`/issuers/${tenant}/nonce`, {}))).c_nonce
    },
    async proof(nonce, key) {
      const holder = key ?? (await holderKey())
      return new SignJWT({ nonce })
        .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holder.jwk })
        .setAudience(issuer)
        .setIssuedAt()
        .sign(holder.privateKey)
    },
    async close() {
      await provider.close()
      await app.close()
    },
  }
}

export type HolderKey = Awaited<ReturnType<typeof holderKey>>

export async function holderKey() {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  return { privateKey, jwk: await exportJWK(publicKey) }
}
