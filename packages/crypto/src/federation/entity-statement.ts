import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose'

/**
 * OpenID Federation 1.0 §3 Entity Statements: their claims as read here, and the checks of §3.2
 * that need no other statement (the chain's own checks are in trust-chain.ts).
 */
export interface EntityStatement {
  iss: string
  sub: string
  iat: number
  exp: number
  jwks: JSONWebKeySet
  authority_hints?: string[]
  metadata?: Record<string, Record<string, unknown>>
  metadata_policy?: Record<string, unknown>
  metadata_policy_crit?: string[]
  constraints?: FederationConstraints
  trust_marks?: { trust_mark_type: string; trust_mark: string }[]
  trust_mark_issuers?: Record<string, string[]>
  trust_mark_owners?: Record<string, unknown>
  crit?: string[]
  [claim: string]: unknown
}

/** §6.2 constraints of a subordinate statement. */
export interface FederationConstraints {
  max_path_length?: number
  naming_constraints?: { permitted?: string[]; excluded?: string[] }
  allowed_entity_types?: string[]
}

/**
 * Why a chain is refused, for whoever reads the refusal: a broken chain (a link, a key, a
 * signature, a fetch, a constraint), an expired statement, metadata that violates the policies,
 * or a required trust mark without a valid mark.
 */
export type FederationRefusalKind =
  | 'broken-chain'
  | 'expired-statement'
  | 'policy-violation'
  | 'missing-trust-mark'

/** A statement or a trust mark refused; the chain it belongs to is invalid (fail closed). */
export class FederationTrustError extends Error {
  override name = 'FederationTrustError'
  readonly kind: FederationRefusalKind
  constructor(message: string, kind: FederationRefusalKind = 'broken-chain') {
    super(message)
    this.kind = kind
  }
}

// §3.2: an acceptable JWS algorithm, never none.
export const FEDERATION_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'EdDSA']
// Clock skew allowed on iat and exp (§3.2: "possibly allowing for some small leeway").
export const CLOCK_SKEW_SECONDS = 60

/** The statement's claims without checking anything: to find whom to ask next. */
export function decodeEntityStatement(jwt: string, what = 'entity statement'): EntityStatement {
  let claims: Record<string, unknown>
  try {
    claims = decodeJwt(jwt)
  } catch {
    throw new FederationTrustError(`the ${what} is not a JWT`)
  }
  if (typeof claims.iss !== 'string' || typeof claims.sub !== 'string')
    throw new FederationTrustError(`the ${what} has no iss or sub`)
  return claims as EntityStatement
}

export interface VerifyStatementOptions {
  /** The key set of the issuing entity (its entity configuration's, or the configured anchor keys). */
  keys: JSONWebKeySet
  now: Date
  /** The media type in `typ`: entity statements and trust marks are explicitly typed. */
  typ: 'entity-statement+jwt' | 'trust-mark+jwt'
  what: string
}

/**
 * Verifies a signed federation JWT (§3.2, and §7.3 for trust marks): `typ`, an acceptable `alg`,
 * a non-empty `kid` naming a key of `keys`, the signature, `iat` not ahead and `exp` not passed
 * (trust marks may have no `exp`), and for entity statements a `jwks` and no unknown `crit` claim.
 */
export async function verifyFederationJwt(
  jwt: string,
  options: VerifyStatementOptions,
): Promise<EntityStatement> {
  const { what } = options
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(jwt)
  } catch {
    throw new FederationTrustError(`the ${what} is not a signed JWT`)
  }
  if (header.typ !== options.typ)
    throw new FederationTrustError(`the ${what} does not have typ ${options.typ}`)
  if (typeof header.kid !== 'string' || header.kid === '')
    throw new FederationTrustError(`the ${what} has no kid`)
  if (!options.keys.keys.some((jwk) => jwk.kid === header.kid))
    throw new FederationTrustError(`the ${what} is signed with kid ${header.kid}, not a key of its issuer`)
  const isStatement = options.typ === 'entity-statement+jwt'
  let payload: Record<string, unknown>
  try {
    ;({ payload } = await jwtVerify(jwt, createLocalJWKSet(options.keys), {
      algorithms: FEDERATION_ALGORITHMS,
      currentDate: options.now,
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: isStatement ? ['iss', 'sub', 'iat', 'exp'] : ['iss', 'sub', 'iat'],
    }))
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'ERR_JWT_EXPIRED')
      throw new FederationTrustError(`the ${what} has expired`, 'expired-statement')
    if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
      throw new FederationTrustError(`the signature of the ${what} does not verify`)
    throw new FederationTrustError(`the ${what} does not verify (${code ?? 'malformed'})`)
  }
  if ((payload.iat as number) > options.now.getTime() / 1000 + CLOCK_SKEW_SECONDS)
    throw new FederationTrustError(`the ${what} is issued in the future`)
  if (isStatement) {
    const jwks = payload.jwks as JSONWebKeySet | undefined
    if (!jwks || !Array.isArray(jwks.keys)) throw new FederationTrustError(`the ${what} has no jwks`)
    // This implementation defines no extension claims, so any critical one is not understood.
    if (payload.crit !== undefined)
      throw new FederationTrustError(`the ${what} has critical claims not understood`)
  }
  return payload as EntityStatement
}
