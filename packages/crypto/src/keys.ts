import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto'
import { calculateJwkThumbprint, type JWK } from 'jose'
import { algorithmForJwk, type SigningAlgorithm } from './signer'

export interface KeyPairJwks {
  alg: SigningAlgorithm
  kid: string
  privateJwk: JWK
  publicJwk: JWK
}

/** Public members only: what may leave the service. */
export function publicPart(jwk: JWK): JWK {
  const { kty, crv, x, y } = jwk
  return JSON.parse(JSON.stringify({ kty, crv, x, y })) as JWK
}

async function describe(privateKey: KeyObject): Promise<KeyPairJwks> {
  const privateJwk = privateKey.export({ format: 'jwk' }) as JWK
  const publicJwk = publicPart(createPublicKey(privateKey).export({ format: 'jwk' }) as JWK)
  return {
    alg: algorithmForJwk(publicJwk),
    kid: await calculateJwkThumbprint(publicJwk),
    privateJwk,
    publicJwk,
  }
}

export async function generateKeyPair(alg: SigningAlgorithm): Promise<KeyPairJwks> {
  const { privateKey } =
    alg === 'EdDSA'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: alg === 'ES256' ? 'P-256' : 'P-384' })
  return describe(privateKey)
}

/** Reads a private key given as a JWK or a PEM (PKCS#8 or SEC1); refuses public-only input. */
export async function importPrivateKey(input: JWK | string): Promise<KeyPairJwks> {
  let key: KeyObject
  try {
    key =
      typeof input === 'string'
        ? createPrivateKey({ key: input, format: 'pem' })
        : createPrivateKey({ key: input as JsonWebKey, format: 'jwk' })
  } catch (cause) {
    throw new Error('the private key could not be read (expected a private JWK or a PEM private key)', {
      cause,
    })
  }
  if (!signsForItsPublicKey(key))
    throw new Error('the private key does not match the public key given with it (x, y)')
  return describe(key)
}

/**
 * A JWK's `d` is taken as given, beside its `x`/`y`: a pair that does not belong together would
 * sign what its own public key cannot verify (and fail later, in certificate building).
 */
function signsForItsPublicKey(key: KeyObject): boolean {
  const probe = Buffer.from('key pair check')
  const digest = key.asymmetricKeyType === 'ed25519' ? null : 'sha256'
  try {
    return verify(digest, probe, createPublicKey(key), sign(digest, probe, key))
  } catch {
    return false
  }
}

export async function thumbprint(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(publicPart(jwk))
}
