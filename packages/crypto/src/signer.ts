import { base64url, type JWK } from 'jose'

/** JWS algorithms we sign with: ES256 (required by HAIP), ES384 and EdDSA where the provider has them. */
export const SIGNING_ALGORITHMS = ['ES256', 'ES384', 'EdDSA'] as const
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number]

/**
 * The one signing port: everything that signs (access tokens, credentials, MSOs, request objects,
 * status lists, metadata) gets a Signer and never sees where the private key lives.
 */
export interface Signer {
  alg: SigningAlgorithm
  /** Key id: the RFC 7638 thumbprint of the public key. */
  kid: string
  publicJwk: JWK
  /** Certificate chain for `x5c` / `x5chain`: base64 DER, leaf first; may be empty. */
  x5c: string[]
  /** Signs `data` and returns the raw signature in JOSE form (r‖s for ECDSA, RFC 7518 §3.4). */
  sign(data: Uint8Array): Promise<Uint8Array>
}

const encoder = new TextEncoder()

/** Compact JWS (RFC 7515 §7.1) over a JSON payload, signed through the Signer port. */
export async function signJws(
  signer: Signer,
  header: Record<string, unknown>,
  payload: Record<string, unknown> | Uint8Array,
): Promise<string> {
  const protectedHeader = base64url.encode(JSON.stringify({ ...header, alg: signer.alg }))
  const body = base64url.encode(payload instanceof Uint8Array ? payload : JSON.stringify(payload))
  const signingInput = `${protectedHeader}.${body}`
  const signature = await signer.sign(encoder.encode(signingInput))
  return `${signingInput}.${base64url.encode(signature)}`
}

/** Hash used with each algorithm (RFC 7518 §3.4; EdDSA signs the message itself). */
export function hashFor(alg: SigningAlgorithm): 'sha256' | 'sha384' | null {
  return alg === 'ES256' ? 'sha256' : alg === 'ES384' ? 'sha384' : null
}

/** The algorithm a public JWK is used with. */
export function algorithmForJwk(jwk: JWK): SigningAlgorithm {
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256'
  if (jwk.kty === 'EC' && jwk.crv === 'P-384') return 'ES384'
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA'
  throw new Error(`unsupported key type ${jwk.kty ?? '?'} ${jwk.crv ?? ''}`.trim())
}
