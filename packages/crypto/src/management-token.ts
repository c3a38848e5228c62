import {
  type AccessTokenClaims,
  type Principal,
  UnauthenticatedError,
  zAccessTokenClaims,
} from '@credential-service/core-domain'
import { createLocalJWKSet, type JWK, jwtVerify, SignJWT } from 'jose'
import type { ManagementSigningKey } from './master-secret'

export interface TokenIssuerOptions {
  key: ManagementSigningKey
  /** `iss` and `aud` of management tokens: `{PUBLIC_URL}/api`. */
  issuer: string
  lifetimeSeconds: number
  now?: () => Date
}

export interface IssuedToken {
  accessToken: string
  expiresIn: number
}

export function createManagementTokenIssuer(options: TokenIssuerOptions) {
  const now = options.now ?? (() => new Date())
  return async function issue(principal: Principal): Promise<IssuedToken> {
    const iat = Math.floor(now().getTime() / 1000)
    const builder = new SignJWT({
      client_id: principal.clientId,
      roles: [...principal.roles],
      ...(principal.tenantGeneration === undefined ? {} : { tenant_generation: principal.tenantGeneration }),
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: options.key.publicJwk.kid })
      .setIssuer(options.issuer)
      .setAudience(options.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + options.lifetimeSeconds)
      .setJti(globalThis.crypto.randomUUID())
    if (principal.tenantId !== undefined) builder.setSubject(principal.tenantId)
    return { accessToken: await builder.sign(options.key.privateKey), expiresIn: options.lifetimeSeconds }
  }
}

export interface TokenVerifierOptions {
  /** Keys accepted for management tokens (the derived key; a JWKS lets other services verify too). */
  jwks: { keys: JWK[] }
  issuer: string
  now?: () => Date
}

const REMEMBERED_TOKENS = 10_000

/**
 * Stateless verification (spec §5 rule 1): signature, issuer, audience, lifetime, claim shapes.
 * Whether a tenant token's `tenant_generation` is still its tenant's is the caller's check (it
 * needs the database; see server-kit auth.ts).
 * An integrator sends the same token for its whole lifetime, so a verified token is remembered
 * until it expires: the signature is checked once per token and process, not once per call.
 */
export function createManagementTokenVerifier(options: TokenVerifierOptions) {
  const keySet = createLocalJWKSet(options.jwks)
  const now = options.now ?? (() => new Date())
  const verified = new Map<string, { principal: Principal; expiresAt: number }>()
  return async function verify(token: string): Promise<Principal> {
    const known = verified.get(token)
    if (known && now().getTime() < known.expiresAt) return known.principal
    if (known) verified.delete(token)
    const { principal, expiresAt } = await verifyOnce(token)
    if (verified.size >= REMEMBERED_TOKENS) verified.delete(verified.keys().next().value as string)
    verified.set(token, { principal, expiresAt: expiresAt * 1000 })
    return principal
  }

  async function verifyOnce(token: string): Promise<{ principal: Principal; expiresAt: number }> {
    let claims: AccessTokenClaims
    try {
      const { payload } = await jwtVerify(token, keySet, {
        issuer: options.issuer,
        audience: options.issuer,
        algorithms: ['EdDSA'],
        typ: 'at+jwt',
        ...(options.now ? { currentDate: options.now() } : {}),
      })
      claims = zAccessTokenClaims.parse(payload)
    } catch (cause) {
      throw new UnauthenticatedError('the access token is invalid or expired', { cause, invalidToken: true })
    }
    return {
      principal: {
        clientId: claims.client_id,
        tenantId: claims.sub,
        ...(claims.tenant_generation === undefined ? {} : { tenantGeneration: claims.tenant_generation }),
        roles: claims.roles,
      },
      expiresAt: claims.exp,
    }
  }
}
