import { type KeyAttestationPolicy, ProtocolError, parseProofs } from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import type { ProtocolDeps } from '@credential-service/server-kit'
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  importJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
} from 'jose'
import type { TenantScope } from '../tenant-scope'
import { type VerifiedKeyAttestation, verifyKeyAttestation } from './key-attestation'
import { ACCEPTED_PROOF_ALGORITHMS } from './metadata'

/** How old a proof's `iat` may be, and how far in the future (clock skew). */
const PROOF_MAX_AGE_SECONDS = 300
const PROOF_MAX_SKEW_SECONDS = 60

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/**
 * `proofs.jwt` (OpenID4VCI §8.2.1, Appendix F.1): `typ` openid4vci-proof+jwt, an asymmetric
 * allowed alg, signed by the public `jwk` in its header, `aud` the issuer, a fresh `iat`, and a
 * `nonce`, the same in every proof. Returns the holder keys and that nonce, which the caller spends
 * once for the whole request (in the statement that reads the session: a c_nonce we did not issue,
 * or one already used, is then `invalid_nonce`).
 * With a key attestation policy (Appendix D, F.1, F.3): a `key_attestation` header in the jwt
 * proof (required when the policy says so), or the `attestation` proof type; the holder keys are
 * then the attested keys, one credential each.
 */
export const verifyProofs = traced('issuer verify proofs', verifyProofsUntraced)

async function verifyProofsUntraced(
  scope: TenantScope<ProtocolDeps>,
  proofTypes: Record<string, unknown> | undefined,
  batchSize: number,
  keyAttestation?: KeyAttestationPolicy,
): Promise<ProvenKeys> {
  const { deps } = scope
  const issuer = scope.issuerUrl
  // A configuration without a key attestation policy is told so before its proofs are parsed.
  if (proofTypes?.attestation !== undefined && !keyAttestation)
    throw new ProtocolError(
      'invalid_proof',
      'this credential configuration does not take the attestation proof type',
    )
  // The shape of each proof type is its schema's (core-domain z-credential-request.ts).
  const parsed = parseProofs(proofTypes)
  if (parsed.type === 'attestation')
    return verifyAttestationProof(scope, parsed.proofs, batchSize, keyAttestation)
  const proofs = parsed.proofs
  if (proofs.length > batchSize)
    throw new ProtocolError('invalid_credential_request', `at most ${batchSize} proofs per request`)
  const now = seconds(deps.now())
  const keys: JWK[] = []
  let nonce: unknown
  for (const proof of proofs) {
    let header: ReturnType<typeof decodeProtectedHeader>
    try {
      header = decodeProtectedHeader(proof)
    } catch {
      throw new ProtocolError('invalid_proof', 'a proof is not a JWT')
    }
    if (header.typ !== 'openid4vci-proof+jwt')
      throw new ProtocolError('invalid_proof', 'proof typ must be openid4vci-proof+jwt')
    if (!(ACCEPTED_PROOF_ALGORITHMS as readonly string[]).includes(String(header.alg))) {
      throw new ProtocolError('invalid_proof', `proof alg ${String(header.alg)} is not allowed`)
    }
    // Appendix F.1: kid, jwk and x5c each "MUST NOT be present" alongside another of them.
    if (['kid', 'jwk', 'x5c'].filter((name) => header[name] !== undefined).length > 1)
      throw new ProtocolError('invalid_proof', 'the proof header names its key by one of kid, jwk or x5c')
    const jwk = header.jwk as JWK | undefined
    let attested: VerifiedKeyAttestation | undefined
    if (header.key_attestation !== undefined) {
      if (proofs.length > 1)
        throw new ProtocolError('invalid_proof', 'a proof with a key attestation comes alone')
      attested = await verifyKeyAttestation(scope, header.key_attestation, {
        use: 'jwt',
        policy: keyAttestation,
      })
    } else if (keyAttestation?.required) {
      throw new ProtocolError(
        'invalid_proof',
        'this credential needs a key attestation (key_attestation header)',
      )
    }
    if ((!jwk && !attested) || (jwk && jwk.d !== undefined))
      throw new ProtocolError('invalid_proof', 'the proof header needs the public jwk of the holder key')
    // D.1: the proof is signed by an attested key (named by jwk, or found among attested_keys).
    const candidates = jwk ? [jwk] : (attested?.attestedKeys ?? [])
    const payload = await verifiedByOneOf(proof, candidates, String(header.alg), issuer, deps.now())
    if (attested && jwk) {
      const { kty, crv, x, y } = jwk
      const thumbprint = await calculateJwkThumbprint(JSON.parse(JSON.stringify({ kty, crv, x, y })))
      if (!attested.thumbprints.includes(thumbprint))
        throw new ProtocolError('invalid_proof', 'the proof is not signed by an attested key')
    }
    const iat = Number(payload.iat)
    if (!Number.isFinite(iat) || iat < now - PROOF_MAX_AGE_SECONDS || iat > now + PROOF_MAX_SKEW_SECONDS) {
      throw new ProtocolError('invalid_proof', 'the proof iat is missing or not fresh')
    }
    if (typeof payload.nonce !== 'string') throw new ProtocolError('invalid_nonce', 'the proof has no nonce')
    if (nonce !== undefined && payload.nonce !== nonce)
      throw new ProtocolError('invalid_proof', 'all proofs of a request use the same nonce')
    nonce = payload.nonce
    if (attested) {
      if (attested.nonce !== undefined && attested.nonce !== payload.nonce)
        throw new ProtocolError('invalid_nonce', 'the key attestation nonce is not the proof nonce')
      if (attested.attestedKeys.length > batchSize)
        throw new ProtocolError(
          'invalid_credential_request',
          `at most ${batchSize} attested keys per request`,
        )
      keys.push(...attested.attestedKeys)
      continue
    }
    const { kty, crv, x, y } = jwk as JWK
    const publicJwk = JSON.parse(JSON.stringify({ kty, crv, x, y })) as JWK
    if (keys.some((k) => k.x === publicJwk.x && k.y === publicJwk.y))
      throw new ProtocolError('invalid_proof', 'two proofs use the same key')
    keys.push(publicJwk)
  }
  return { keys, nonce: String(nonce) }
}

/** Verified holder keys and the c_nonce their proofs carry, not spent yet. */
export interface ProvenKeys {
  keys: JWK[]
  nonce: string
}

/** The answer to a proof whose c_nonce was not spent by this request (OpenID4VCI §8.3.1.2). */
export const nonceNotSpent = () =>
  new ProtocolError('invalid_nonce', 'the nonce is unknown, expired or already used')

/** The proof's payload, verified with the first candidate key whose signature matches. */
async function verifiedByOneOf(
  proof: string,
  candidates: JWK[],
  alg: string,
  audience: string,
  now: Date,
): Promise<JWTPayload> {
  let failure: unknown
  for (const candidate of candidates) {
    try {
      const verified = await jwtVerify(proof, await importJWK(candidate, alg), {
        audience,
        algorithms: [...ACCEPTED_PROOF_ALGORITHMS],
        typ: 'openid4vci-proof+jwt',
        currentDate: now,
      })
      return verified.payload
    } catch (cause) {
      failure = cause
    }
  }
  throw new ProtocolError('invalid_proof', 'the proof signature, audience or lifetime is invalid', {
    cause: failure,
  })
}

/**
 * The `attestation` proof type (OpenID4VCI 1.0 Appendix F.3): exactly one key attestation whose
 * `nonce` is a c_nonce for the caller to spend; one credential per attested key.
 */
async function verifyAttestationProof(
  scope: TenantScope<ProtocolDeps>,
  list: unknown[],
  batchSize: number,
  policy: KeyAttestationPolicy | undefined,
): Promise<ProvenKeys> {
  const attested = await verifyKeyAttestation(scope, list[0], { use: 'attestation', policy })
  if (attested.nonce === undefined)
    throw new ProtocolError('invalid_nonce', 'the key attestation has no nonce')
  if (attested.attestedKeys.length > batchSize)
    throw new ProtocolError('invalid_credential_request', `at most ${batchSize} attested keys per request`)
  return { keys: attested.attestedKeys, nonce: attested.nonce }
}
