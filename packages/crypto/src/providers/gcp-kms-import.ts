import { constants, createCipheriv, createPublicKey, publicEncrypt, randomBytes } from 'node:crypto'
import { KeyProviderError } from './provider'

/**
 * The Cloud KMS import methods this service wraps for (ImportJob.ImportMethod), all RSAES-OAEP
 * with SHA-256 and MGF1 SHA-256: `bits` of the import job's RSA wrapping key, `aes` when the key
 * material goes under an ephemeral AES-256 key (the PKCS#11 CKM_RSA_AES_KEY_WRAP layout).
 */
export const IMPORT_METHODS = {
  RSA_OAEP_3072_SHA256_AES_256: { bits: 3072, aes: true },
  RSA_OAEP_4096_SHA256_AES_256: { bits: 4096, aes: true },
  RSA_OAEP_3072_SHA256: { bits: 3072, aes: false },
  RSA_OAEP_4096_SHA256: { bits: 4096, aes: false },
} as const
export type ImportMethod = keyof typeof IMPORT_METHODS

/** RFC 5649 §3: the alternative initial value of AES key wrap with padding (AES-KWP). */
const KWP_IV = Buffer.from('a65959a6', 'hex')

/**
 * `wrappedKey` of cryptoKeyVersions.import for a PKCS#8 DER private key, as Google's text for the
 * field says: with an `_AES_256` method, an ephemeral AES-256 key wrapped with the import job's
 * public key (RSAES-OAEP, SHA-256, MGF1 SHA-256, empty label) followed by the key wrapped with that
 * AES key (AES-KWP, RFC 5649); otherwise the key wrapped with the public key directly. The
 * ephemeral key is zeroed after use.
 */
export function wrapForImport(method: ImportMethod, wrappingPem: string, pkcs8: Buffer): Buffer {
  const { bits, aes } = IMPORT_METHODS[method]
  const wrappingKey = createPublicKey(wrappingPem)
  if (wrappingKey.asymmetricKeyType !== 'rsa' || wrappingKey.asymmetricKeyDetails?.modulusLength !== bits) {
    throw new KeyProviderError(`Cloud KMS import job: not the ${bits}-bit RSA wrapping key of ${method}`)
  }
  const oaep = (data: Buffer) =>
    publicEncrypt({ key: wrappingKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, data)
  if (!aes) return oaep(pkcs8)
  const ephemeral = randomBytes(32)
  try {
    const kwp = createCipheriv('id-aes256-wrap-pad', ephemeral, KWP_IV)
    return Buffer.concat([oaep(ephemeral), kwp.update(pkcs8), kwp.final()])
  } finally {
    ephemeral.fill(0)
  }
}
