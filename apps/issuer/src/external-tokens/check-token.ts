import { createHash } from 'node:crypto'
import { DomainError } from '@credential-service/core-domain'
import { ASYMMETRIC_JWS_ALGORITHMS } from '@credential-service/crypto'
import type { AuthServerRow } from '@credential-service/db-schema'
import { createLocalJWKSet, decodeJwt, errors, type JWTPayload, jwtVerify } from 'jose'
import { createServerDocuments, type ServerDocumentDeps, type ServerDocuments } from './server-documents'

const TOKEN_ALGORITHMS = ASYMMETRIC_JWS_ALGORITHMS
/** An introspection answer without `exp` is kept this long at most. */
const INTROSPECTION_DEFAULT_SECONDS = 60
const MAX_INTROSPECTIONS = 10_000

/** Why a token is refused: the wallet sees `invalid_token` with this description. */
export class TokenRefused extends Error {}

/** A process's external token state: server documents and introspection answers. */
export function createExternalTokens(deps: ServerDocumentDeps) {
  return {
    documents: createServerDocuments(deps),
    /** Active introspection answers by token hash, until the token expires (RFC 7662 §4). */
    introspected: new Map<string, { answer: JWTPayload; until: number }>(),
  }
}
export type ExternalTokens = ReturnType<typeof createExternalTokens>

const tokenHash = (token: string) => createHash('sha256').update(token).digest('base64url')

/**
 * The server a token comes from: a JWT names it in `iss` (read unverified, to pick the keys or
 * the introspection endpoint); an opaque token can only be the one introspecting server's.
 */
export function serverOf(token: string, servers: AuthServerRow[]): AuthServerRow {
  let issuer: unknown
  try {
    issuer = decodeJwt(token).iss
  } catch {
    const introspecting = servers.filter((server) => server.tokenCheck === 'introspection')
    if (introspecting.length === 1) return introspecting[0] as AuthServerRow
    throw new TokenRefused('the access token is invalid or expired')
  }
  const server = servers.find((candidate) => candidate.issuer === issuer)
  // The same answer as for a bad token of the issuer's own (an expired one comes here too).
  if (!server) throw new TokenRefused('the access token is invalid or expired')
  return server
}

export interface CheckedToken {
  /** The JWT payload, or the introspection answer. */
  claims: JWTPayload
  /** Binds the token to its session: the server and `jti`, or the token's hash. */
  key: string
}

/**
 * Checks a token of `server` for `audience` (the credential issuer identifier): RFC 9068 §4
 * (`typ` `at+jwt`, `iss`, `aud`, `exp`, signature by a key of the server's JWKS; an unknown `kid`
 * fetches the JWKS again, within its cooldown) or RFC 7662 (an active answer, its `iss`, `aud`
 * and `exp`; kept until `exp`, or a minute without one).
 */
export async function checkToken(
  tokens: ExternalTokens,
  server: AuthServerRow,
  token: string,
  options: { audience: string; now: Date; clientSecret: () => string | undefined },
): Promise<CheckedToken> {
  const claims =
    server.tokenCheck === 'introspection'
      ? await introspected(tokens, server, token, options)
      : await verifiedJwt(tokens.documents, server, token, options)
  const jti = typeof claims.jti === 'string' ? claims.jti : `#${tokenHash(token)}`
  return { claims, key: `${server.id}:${jti}` }
}

async function verifiedJwt(
  documents: ServerDocuments,
  server: AuthServerRow,
  token: string,
  options: { audience: string; now: Date },
): Promise<JWTPayload> {
  const metadata = await documents.metadata(server.issuer)
  if (!metadata.jwks_uri) throw new TokenRefused('the authorization server publishes no jwks_uri')
  const verify = async (refresh: boolean) =>
    jwtVerify(token, createLocalJWKSet(await documents.jwks(metadata.jwks_uri as string, refresh)), {
      issuer: server.issuer,
      audience: options.audience,
      typ: 'at+jwt',
      algorithms: TOKEN_ALGORITHMS,
      currentDate: options.now,
      requiredClaims: ['exp'],
    })
  try {
    try {
      return (await verify(false)).payload
    } catch (error) {
      // A key the copy does not have: the server may have rotated; fetch again (rate bound).
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
      return (await verify(true)).payload
    }
  } catch (error) {
    if (error instanceof DomainError) throw error
    throw new TokenRefused('the access token is invalid or expired')
  }
}

async function introspected(
  tokens: ExternalTokens,
  server: AuthServerRow,
  token: string,
  options: { audience: string; now: Date; clientSecret: () => string | undefined },
): Promise<JWTPayload> {
  const now = options.now.getTime() / 1000
  const hash = `${server.id}:${tokenHash(token)}`
  const known = tokens.introspected.get(hash)
  if (known && known.until > now) return known.answer
  const metadata = await tokens.documents.metadata(server.issuer)
  if (!metadata.introspection_endpoint)
    throw new TokenRefused('the authorization server publishes no introspection_endpoint')
  const answer = (await tokens.documents.introspect(metadata.introspection_endpoint, token, {
    id: server.clientId ?? '',
    secret: options.clientSecret(),
  })) as JWTPayload & { active?: unknown }
  if (answer.active !== true) throw new TokenRefused('the access token is not active')
  if (answer.iss !== undefined && answer.iss !== server.issuer)
    throw new TokenRefused('the access token is from another issuer')
  const audiences = Array.isArray(answer.aud) ? answer.aud : [answer.aud]
  if (!audiences.includes(options.audience))
    throw new TokenRefused('the access token is not for this credential issuer')
  if (typeof answer.exp === 'number' && answer.exp <= now) throw new TokenRefused('the access token expired')
  const until = typeof answer.exp === 'number' ? answer.exp : now + INTROSPECTION_DEFAULT_SECONDS
  if (tokens.introspected.size >= MAX_INTROSPECTIONS) tokens.introspected.clear()
  tokens.introspected.set(hash, { answer, until })
  return answer
}
