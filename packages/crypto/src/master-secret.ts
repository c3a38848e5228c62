import { createPrivateKey, createPublicKey, hkdfSync, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose'

/** Purposes keep keys derived from the one MASTER_SECRET independent of each other (RFC 5869 `info`). */
export type MasterKeyPurpose =
  | 'management-token-signing'
  | 'jwk-encryption'
  | 'offer-claims-encryption'
  | 'presentation-result-encryption'
  | 'dpop-nonce'
  | 'attestation-challenge'
  | 'c-nonce'

const SALT = 'credential-service/master-secret/v1'

export function deriveKeyMaterial(masterSecret: string, purpose: MasterKeyPurpose, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', masterSecret, SALT, purpose, length))
}

// PKCS#8 prefix of an Ed25519 private key (RFC 8410 §7): the 32-byte seed follows it.
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

export interface ManagementSigningKey {
  privateKey: KeyObject
  publicJwk: JWK & { kid: string; alg: 'EdDSA'; use: 'sig' }
}

/**
 * The management API's token-signing key pair: Ed25519 from an HKDF seed of MASTER_SECRET, so every
 * management pod derives the same key without storing it, and no token outlives a secret change.
 */
export async function deriveManagementSigningKey(masterSecret: string): Promise<ManagementSigningKey> {
  const seed = deriveKeyMaterial(masterSecret, 'management-token-signing')
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  })
  const jwk = await exportJWK(createPublicKey(privateKey))
  const kid = await calculateJwkThumbprint(jwk)
  return { privateKey, publicJwk: { ...jwk, kid, alg: 'EdDSA', use: 'sig' } }
}
