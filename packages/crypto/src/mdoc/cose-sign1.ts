import type { Signer, SigningAlgorithm } from '../signer'
import { loadCbor } from './cbor'

/** COSE algorithm ids (RFC 9053). */
export const COSE_ALG: Record<SigningAlgorithm, number> = { ES256: -7, ES384: -35, EdDSA: -8 }

/**
 * A COSE_Sign1 (RFC 9052 §4.2, §4.4) through the Signer port: `alg` in the protected header, the
 * signer's certificate chain as `x5chain` (label 33) unprotected, the signature over
 * Sig_structure ["Signature1", protected, h'', payload]. With `detached` the payload is nil in the
 * structure and travels elsewhere (ISO 18013-5 §9.1.4: readerAuth and deviceSignature).
 */
export async function signCoseSign1(
  signer: Signer,
  payload: Uint8Array,
  options: { detached?: boolean } = {},
): Promise<[Uint8Array, Map<number, unknown>, Uint8Array | null, Uint8Array]> {
  const { cbor } = await loadCbor()
  const protectedHeader = cbor.encode(new Map([[1, COSE_ALG[signer.alg]]]))
  const toBeSigned = cbor.encode(['Signature1', protectedHeader, new Uint8Array(0), payload])
  const signature = await signer.sign(toBeSigned)
  const x5chain = signer.x5c.map((der) => Buffer.from(der, 'base64'))
  // One certificate is a bstr, more an array of them (RFC 9360 §2).
  const unprotected = new Map<number, unknown>(
    x5chain.length ? [[33, x5chain.length === 1 ? x5chain[0] : x5chain]] : [],
  )
  return [protectedHeader, unprotected, options.detached ? null : payload, signature]
}
