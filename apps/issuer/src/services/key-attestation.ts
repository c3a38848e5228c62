import { type KeyAttestationPolicy, ProtocolError } from '@credential-service/core-domain'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { calculateJwkThumbprint, importJWK, type JWK } from 'jose'
import type { TenantScope } from '../tenant-scope'
import { AttestationError, verifyAttestedJwt } from './attestation-trust'

const MAX_ATTESTED_KEYS = 100
const IAT_SKEW_SECONDS = 60
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth']
/** Key types of the proof algorithms (PROOF_ALGORITHMS): what a credential may be bound to. */
const ALGORITHM_OF_KEY: Record<string, string> = {
  'EC P-256': 'ES256',
  'EC P-384': 'ES384',
  'OKP Ed25519': 'Ed25519',
}

export interface VerifiedKeyAttestation {
  /** Public parts of `attested_keys`: one credential is issued per key. */
  attestedKeys: JWK[]
  /** RFC 7638 thumbprints of the attested keys, in the same order. */
  thumbprints: string[]
  /** The attestation's `nonce`, when it has one. */
  nonce: string | undefined
  walletProviderId: string
}

const invalidProof = (description: string, cause?: unknown) =>
  new ProtocolError('invalid_proof', description, { cause })

/**
 * A key attestation (OpenID4VCI 1.0 Appendix D.1; HAIP §4.5.1): `typ` key-attestation+jwt, `x5c`
 * to a trusted wallet provider (anchor not in the chain, leaf not self-signed), `iat` not in the
 * future, `exp` (required when it rides in a jwt proof, `use: 'jwt'`), a non-empty
 * `attested_keys` of valid public keys of the proof algorithms' types, and `key_storage` /
 * `user_authentication` that meet the configuration's policy. Failures are invalid_proof.
 */
export async function verifyKeyAttestation(
  scope: TenantScope<Pick<ProtocolDeps, 'db' | 'now' | 'tenants' | 'outbound'>>,
  jwt: unknown,
  options: { use: 'jwt' | 'attestation'; policy: KeyAttestationPolicy | undefined },
): Promise<VerifiedKeyAttestation> {
  const { deps } = scope
  if (typeof jwt !== 'string') throw invalidProof('the key attestation is not a JWT')
  let verified: Awaited<ReturnType<typeof verifyAttestedJwt>>
  try {
    verified = await verifyAttestedJwt(scope, jwt, 'key-attestation+jwt')
  } catch (cause) {
    if (!(cause instanceof AttestationError)) throw cause
    throw invalidProof(`the key attestation is refused: ${cause.message}`, cause)
  }
  const { payload } = verified
  const now = Math.floor(deps.now().getTime() / 1000)
  if (typeof payload.iat !== 'number' || payload.iat > now + IAT_SKEW_SECONDS)
    throw invalidProof('the key attestation iat is missing or in the future')
  if (options.use === 'jwt' && typeof payload.exp !== 'number')
    throw invalidProof('a key attestation in a jwt proof needs exp')
  const keys = payload.attested_keys
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_ATTESTED_KEYS)
    throw invalidProof('the key attestation needs a non-empty attested_keys')
  const attestedKeys: JWK[] = []
  const thumbprints: string[] = []
  for (const key of keys as unknown[]) {
    if (!key || typeof key !== 'object' || PRIVATE_JWK_MEMBERS.some((member) => member in key))
      throw invalidProof('attested_keys must hold public JWKs')
    const { kty, crv, x, y } = key as JWK
    const alg = ALGORITHM_OF_KEY[`${kty} ${crv}`]
    if (!alg) throw invalidProof('attested_keys must be EC P-256, EC P-384 or OKP Ed25519 keys')
    const publicJwk = JSON.parse(JSON.stringify({ kty, crv, x, y })) as JWK
    let thumbprint: string
    try {
      // S-11: the import refuses a point off the curve before the key becomes a credential's cnf.
      await importJWK(publicJwk, alg)
      thumbprint = await calculateJwkThumbprint(publicJwk, 'sha256')
    } catch (cause) {
      throw invalidProof('attested_keys must hold valid public keys', cause)
    }
    if (!thumbprints.includes(thumbprint)) {
      thumbprints.push(thumbprint)
      attestedKeys.push(publicJwk)
    }
  }
  const meets = (claimed: unknown, accepted: string[] | undefined) =>
    !accepted ||
    (Array.isArray(claimed) && claimed.some((value) => typeof value === 'string' && accepted.includes(value)))
  if (!meets(payload.key_storage, options.policy?.keyStorage))
    throw invalidProof(`key_storage must include one of ${options.policy?.keyStorage?.join(', ')}`)
  if (!meets(payload.user_authentication, options.policy?.userAuthentication))
    throw invalidProof(
      `user_authentication must include one of ${options.policy?.userAuthentication?.join(', ')}`,
    )
  return {
    attestedKeys,
    thumbprints,
    nonce: typeof payload.nonce === 'string' ? payload.nonce : undefined,
    walletProviderId: verified.walletProviderId,
  }
}
