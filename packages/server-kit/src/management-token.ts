import { createPublicKey } from 'node:crypto'
import { type Principal, UnauthenticatedError, zAccessTokenClaims } from '@credential-service/core-domain'
import type { ManagementSigningKey } from '@credential-service/crypto'
import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance } from 'fastify'
import type { VerifyAccessToken } from './auth'

export interface ManagementTokenOptions {
  /** The key derived from MASTER_SECRET (`deriveManagementSigningKey`). */
  key: ManagementSigningKey
  /** `iss` and `aud` of management tokens: `{PUBLIC_URL}/api`. */
  issuer: string
  /** Lifetime of issued tokens (`ACCESS_TOKEN_TTL_SECONDS`); without it, tokens are only verified. */
  lifetimeSeconds?: number
  /** A clock for tests; tokens are issued and checked against the real one without it. */
  now?: () => Date
}

export interface IssuedToken {
  accessToken: string
  expiresIn: number
}

export interface ManagementTokens {
  issue: (principal: Principal) => Promise<IssuedToken>
  /**
   * Stateless verification (spec §5 rule 1): signature, `typ`, issuer, audience, lifetime, claim
   * shapes. Whether a tenant token's `tenant_generation` is still its tenant's is the caller's
   * check (it needs the database; see `tenantBoundVerifier`).
   */
  verify: VerifyAccessToken
}

const REMEMBERED_TOKENS = 10_000

/**
 * Management access tokens (`typ: at+jwt`, EdDSA, `kid` the key's thumbprint) signed and verified
 * through `@fastify/jwt`, registered on `app` with the key derived from MASTER_SECRET.
 * An integrator sends the same token for its whole lifetime, so a verified token is remembered
 * until it expires: the signature is checked once per token and process, not once per call
 * (cheaper than the plugin's own cache, which hashes the token each time; docs/benchmarks.md).
 */
export async function registerManagementTokens(
  app: FastifyInstance,
  options: ManagementTokenOptions,
): Promise<ManagementTokens> {
  const { key, issuer, lifetimeSeconds, now } = options
  await app.register(fastifyJwt, {
    secret: {
      private: key.privateKey.export({ format: 'pem', type: 'pkcs8' }),
      public: createPublicKey(key.privateKey).export({ format: 'pem', type: 'spki' }),
    },
    sign: {
      algorithm: 'EdDSA',
      header: { alg: 'EdDSA', typ: 'at+jwt' },
      kid: key.publicJwk.kid,
      iss: issuer,
      aud: issuer,
      // @fastify/jwt reads a number as seconds (fast-jwt itself takes milliseconds)
      ...(lifetimeSeconds === undefined ? {} : { expiresIn: lifetimeSeconds }),
    },
    verify: { algorithms: ['EdDSA'], checkTyp: 'at+jwt', allowedIss: issuer, allowedAud: issuer },
  })
  const clock = now ?? (() => new Date())

  async function issue(principal: Principal): Promise<IssuedToken> {
    if (lifetimeSeconds === undefined) throw new Error('management tokens are only verified here')
    const accessToken = app.jwt.sign({
      client_id: principal.clientId,
      roles: [...principal.roles],
      ...(principal.tenantGeneration === undefined ? {} : { tenant_generation: principal.tenantGeneration }),
      ...(principal.tenantId === undefined ? {} : { sub: principal.tenantId }),
      iat: Math.floor(clock().getTime() / 1000),
      jti: globalThis.crypto.randomUUID(),
    })
    return { accessToken, expiresIn: lifetimeSeconds }
  }

  function verifyOnce(token: string): { principal: Principal; expiresAt: number } {
    try {
      const payload = now ? app.jwt.verify(token, { clockTimestamp: now().getTime() }) : app.jwt.verify(token)
      const claims = zAccessTokenClaims.parse(payload)
      // RFC 7519 §4.1.4: expired from `exp` on (fast-jwt still accepts its very millisecond)
      if (clock().getTime() >= claims.exp * 1000) throw new Error('the token has expired')
      return {
        principal: {
          clientId: claims.client_id,
          tenantId: claims.sub,
          ...(claims.tenant_generation === undefined ? {} : { tenantGeneration: claims.tenant_generation }),
          roles: claims.roles,
        },
        expiresAt: claims.exp * 1000,
      }
    } catch (cause) {
      throw new UnauthenticatedError('the access token is invalid or expired', { cause, invalidToken: true })
    }
  }

  const verified = new Map<string, { principal: Principal; expiresAt: number }>()
  async function verify(token: string): Promise<Principal> {
    const known = verified.get(token)
    if (known && clock().getTime() < known.expiresAt) return known.principal
    if (known) verified.delete(token)
    const { principal, expiresAt } = verifyOnce(token)
    if (verified.size >= REMEMBERED_TOKENS) verified.delete(verified.keys().next().value as string)
    verified.set(token, { principal, expiresAt })
    return principal
  }

  return { issue, verify }
}
