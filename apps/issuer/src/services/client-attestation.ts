import type { IncomingHttpHeaders } from 'node:http'
import { ProtocolError } from '@credential-service/core-domain'
import { createJtiRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose'
import type { TenantScope } from '../tenant-scope'
import { ATTESTATION_ALGORITHMS, AttestationError, verifyAttestedJwt } from './attestation-trust'
import type { ServerNonces } from './server-nonces'

/** How far a PoP's `iat` may lie from our clock (ABCA §5.2 freshness). */
const POP_IAT_WINDOW_SECONDS = 60
const ACCEPTED_POP: string[] = [...ATTESTATION_ALGORITHMS, 'EdDSA']

export interface WalletClient {
  /** The attested client id (`sub` of the wallet attestation). */
  clientId: string
  walletProviderId: string
  /** JWK thumbprint of the attestation's `cnf.jwk`: this wallet instance, not only its kind. */
  instanceJkt: string
}

const invalidClient = (description: string, cause?: unknown) =>
  new ProtocolError('invalid_client', description, { status: 401, cause })

/**
 * OAuth 2.0 Attestation-Based Client Authentication (draft -07, HAIP §4.4.1): the
 * `OAuth-Client-Attestation` JWT from a trusted wallet provider (x5c to a tenant anchor, `iss`,
 * `sub` = client id, `exp`, `cnf.jwk`) and the `OAuth-Client-Attestation-PoP` JWT signed by that
 * `cnf.jwk` (`aud` = this authorization server's issuer, fresh `iat`, unused `jti`, `iss` = client
 * id when present as in -07; later drafts drop it). Undefined when neither header is sent; any
 * failure is 401 invalid_client. For the token and the PAR endpoints alike.
 */
export async function authenticateWalletClient(
  scope: TenantScope<
    Pick<ProtocolDeps, 'db' | 'now' | 'publicUrl' | 'tenants' | 'outbound'> & {
      attestationChallenges: ServerNonces
    }
  >,
  request: { headers: IncomingHttpHeaders; clientId?: string | undefined },
): Promise<WalletClient | undefined> {
  const { deps, tenantId } = scope
  const attestation = request.headers['oauth-client-attestation']
  const pop = request.headers['oauth-client-attestation-pop']
  if (attestation === undefined && pop === undefined) return undefined
  if (attestation === undefined || pop === undefined)
    throw invalidClient('send both the OAuth-Client-Attestation and the OAuth-Client-Attestation-PoP header')
  // Node joins a repeated header with ", ": a JWT has no comma, so one means two headers.
  if (typeof attestation !== 'string' || attestation.includes(','))
    throw invalidClient('exactly one OAuth-Client-Attestation header is allowed')
  if (typeof pop !== 'string' || pop.includes(','))
    throw invalidClient('exactly one OAuth-Client-Attestation-PoP header is allowed')
  const issuer = scope.issuerUrl
  let verified: Awaited<ReturnType<typeof verifyAttestedJwt>>
  try {
    verified = await verifyAttestedJwt(scope, attestation, 'oauth-client-attestation+jwt')
  } catch (cause) {
    if (!(cause instanceof AttestationError)) throw cause
    throw invalidClient(`the client attestation is refused: ${cause.message}`, cause)
  }
  const { payload } = verified
  if (typeof payload.iss !== 'string') throw invalidClient('the client attestation has no iss')
  if (typeof payload.sub !== 'string' || payload.sub.length === 0)
    throw invalidClient('the client attestation has no sub')
  if (typeof payload.exp !== 'number') throw invalidClient('the client attestation has no exp')
  if (request.clientId !== undefined && request.clientId !== payload.sub)
    throw invalidClient('client_id does not match the client attestation sub')
  const cnfJwk = (payload.cnf as { jwk?: JWK } | undefined)?.jwk
  if (!cnfJwk || typeof cnfJwk !== 'object' || 'd' in cnfJwk)
    throw invalidClient('the client attestation needs a public cnf.jwk')

  let popPayload: Awaited<ReturnType<typeof jwtVerify>>['payload']
  try {
    const popAlg = String(decodeProtectedHeader(pop).alg)
    if (!ACCEPTED_POP.includes(popAlg)) throw new Error(`alg ${popAlg} is not allowed`)
    popPayload = (
      await jwtVerify(pop, await importJWK(cnfJwk, popAlg), {
        typ: 'oauth-client-attestation-pop+jwt',
        algorithms: ACCEPTED_POP,
        currentDate: deps.now(),
      })
    ).payload
  } catch (cause) {
    throw invalidClient('the client attestation PoP is invalid or not signed by cnf.jwk', cause)
  }
  // ABCA §5.2: aud is this server's issuer identifier, one string. jose would also take an array
  // that merely contains it, and so one PoP would authenticate at two tenants.
  if (popPayload.aud !== issuer)
    throw invalidClient('the client attestation PoP aud must be the issuer identifier, as one string')
  const now = Math.floor(deps.now().getTime() / 1000)
  if (typeof popPayload.iat !== 'number' || Math.abs(popPayload.iat - now) > POP_IAT_WINDOW_SECONDS)
    throw invalidClient('the client attestation PoP iat is missing or not recent')
  if (popPayload.iss !== undefined && popPayload.iss !== payload.sub)
    throw invalidClient('the client attestation PoP iss is not the client id')
  if (typeof popPayload.jti !== 'string' || popPayload.jti.length === 0 || popPayload.jti.length > 256)
    throw invalidClient('the client attestation PoP needs a jti')
  // ABCA (-10) §8: a challenge, when the PoP carries one, is one we handed out and still fresh. The
  // answer's OAuth-Client-Attestation-Challenge header has a fresh one to retry with.
  if (popPayload.challenge !== undefined && !deps.attestationChallenges.valid(tenantId, popPayload.challenge))
    throw new ProtocolError(
      'use_attestation_challenge',
      'the client attestation PoP challenge is unknown or stale; use the OAuth-Client-Attestation-Challenge header',
    )
  const thumbprint = await calculateJwkThumbprint(cnfJwk, 'sha256')
  const until = new Date((now + 2 * POP_IAT_WINDOW_SECONDS) * 1000)
  if (
    !(await createJtiRepository(deps.db, tenantId).use(
      `cap:${thumbprint}:${popPayload.jti}`,
      until,
      deps.now(),
    ))
  )
    throw invalidClient('the client attestation PoP was already used')
  return { clientId: payload.sub, walletProviderId: verified.walletProviderId, instanceJkt: thumbprint }
}
