import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { ProtocolError } from '@credential-service/core-domain'
import { createJtiRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
} from 'jose'
import type { TenantScope } from '../tenant-scope'
import type { ServerNonces } from './server-nonces'

/** DPoP algorithms we advertise (`dpop_signing_alg_values_supported`): asymmetric, fully specified. */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'Ed25519'] as const
/** And accept: `EdDSA` from wallets that predate RFC 9864. */
const ACCEPTED_DPOP_ALGORITHMS: string[] = [...DPOP_ALGORITHMS, 'EdDSA']
/** How far a proof's `iat` may lie from our clock, either way (RFC 9449 §11.1). */
export const DPOP_IAT_WINDOW_SECONDS = 60
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth']

export interface DpopSettings {
  nonces: ServerNonces
  /** A proof must carry a fresh server nonce (env DPOP_NONCE_REQUIRED). */
  nonceRequired: boolean
}

export type DpopDeps = Pick<ProtocolDeps, 'db' | 'now'> & { dpop: DpopSettings }

export interface DpopRequest {
  headers: IncomingHttpHeaders
  /** HTTP method of the request (`htm`). */
  method: string
  /** The request's public URL (`htu`); query and fragment are ignored. */
  url: string
  /** At a resource server: the access token the proof must be bound to (`ath`). */
  accessToken?: string
  /**
   * Where the proof is checked: `token` (authorization server: 400 errors, RFC 9449 §5) or
   * `resource` (401 with a `WWW-Authenticate: DPoP` challenge, §7.1).
   */
  at: 'token' | 'resource'
}

export interface DpopResult {
  /** JWK SHA-256 thumbprint of the proof key (RFC 7638): the `cnf.jkt` of a bound token. */
  jkt: string
}

/** The `WWW-Authenticate` challenge of a resource server's DPoP error (RFC 9449 §7.1). */
export const dpopChallenge = (error: string, description: string) =>
  `DPoP error="${error}", error_description="${description.replaceAll('"', "'")}", algs="${ACCEPTED_DPOP_ALGORITHMS.join(' ')}"`

export function dpopError(
  at: 'token' | 'resource',
  error: 'invalid_dpop_proof' | 'use_dpop_nonce',
  description: string,
  cause?: unknown,
): ProtocolError {
  return at === 'token'
    ? new ProtocolError(error, description, { cause })
    : new ProtocolError(error, description, {
        status: 401,
        challenge: dpopChallenge(error, description),
        cause,
      })
}

/**
 * Verifies the request's DPoP proof (RFC 9449 §4.3): one `DPoP` header, `typ` dpop+jwt, an
 * advertised asymmetric alg, a public `jwk` that signed it, `htm`, `htu`, `iat` within
 * ±DPOP_IAT_WINDOW_SECONDS, `ath` of the access token at a resource server, the server nonce when
 * required, and a `jti` not seen before (recorded in the database, so any pod refuses a replay).
 * Answers undefined when the request carries no DPoP header.
 */
export async function verifyDpop(
  scope: TenantScope<DpopDeps>,
  request: DpopRequest,
): Promise<DpopResult | undefined> {
  const { deps, tenantId } = scope
  const raw = request.headers.dpop
  if (raw === undefined) return undefined
  const fail = (description: string, cause?: unknown): never => {
    throw dpopError(request.at, 'invalid_dpop_proof', description, cause)
  }
  // Node joins repeated headers with ", ": a JWT has no comma, so one means two DPoP headers.
  if (Array.isArray(raw) || raw.includes(',')) return fail('exactly one DPoP header is allowed')
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(raw)
  } catch (cause) {
    return fail('the DPoP header is not a JWT', cause)
  }
  if (header.typ !== 'dpop+jwt') fail('the DPoP proof typ must be dpop+jwt')
  if (!ACCEPTED_DPOP_ALGORITHMS.includes(String(header.alg)))
    fail(`the DPoP proof alg must be one of ${DPOP_ALGORITHMS.join(', ')}`)
  const jwk = header.jwk as JWK | undefined
  if (!jwk || typeof jwk !== 'object') return fail('the DPoP proof header needs the public jwk')
  if (PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) fail('the DPoP proof jwk must be a public key')
  let payload: JWTPayload
  try {
    payload = (
      await jwtVerify(raw, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: ACCEPTED_DPOP_ALGORITHMS,
        currentDate: deps.now(),
      })
    ).payload
  } catch (cause) {
    return fail('the DPoP proof signature or lifetime is invalid', cause)
  }
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256)
    fail('the DPoP proof needs a jti')
  if (payload.htm !== request.method) fail('the DPoP proof htm does not match the request method')
  if (typeof payload.htu !== 'string' || !sameUrl(payload.htu, request.url))
    fail('the DPoP proof htu does not match the request URL')
  const now = Math.floor(deps.now().getTime() / 1000)
  if (typeof payload.iat !== 'number' || Math.abs(payload.iat - now) > DPOP_IAT_WINDOW_SECONDS)
    fail('the DPoP proof iat is missing or not recent')
  if (request.accessToken !== undefined) {
    const ath = createHash('sha256').update(request.accessToken).digest('base64url')
    if (payload.ath !== ath) fail('the DPoP proof ath does not match the access token')
  }
  if (deps.dpop.nonceRequired && !deps.dpop.nonces.valid(tenantId, payload.nonce)) {
    throw dpopError(
      request.at,
      'use_dpop_nonce',
      payload.nonce === undefined
        ? 'a DPoP nonce is required; use the DPoP-Nonce header'
        : 'the DPoP nonce is stale; use the DPoP-Nonce header',
    )
  }
  const jkt = await calculateJwkThumbprint(jwk, 'sha256')
  const until = new Date((now + 2 * DPOP_IAT_WINDOW_SECONDS) * 1000)
  if (!(await createJtiRepository(deps.db, tenantId).use(`dpop:${jkt}:${payload.jti}`, until, deps.now())))
    fail('the DPoP proof was already used')
  return { jkt }
}

/** RFC 9449 §4.3 item 9: `htu` compared without query and fragment, after URL normalisation. */
function sameUrl(htu: string, expected: string): boolean {
  try {
    const a = new URL(htu)
    const b = new URL(expected)
    return a.origin === b.origin && a.pathname === b.pathname
  } catch {
    return false
  }
}
