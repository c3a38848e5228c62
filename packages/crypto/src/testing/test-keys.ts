import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { base64url, type JWK } from 'jose'

export interface GeneratedKey {
  alg: 'ES256' | 'ES384'
  secret: Uint8Array
  publicJwk: JWK
  publicPem: string
  spkiDer: Buffer
}

/** A key held by a fake provider, generated at test time. */
export async function generateTestKey(alg: 'ES256' | 'ES384'): Promise<GeneratedKey> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: alg === 'ES256' ? 'P-256' : 'P-384' })
  const jwk = privateKey.export({ format: 'jwk' })
  const publicKey = createPublicKey(privateKey)
  return {
    alg,
    secret: base64url.decode(jwk.d as string),
    publicJwk: { kty: 'EC', crv: jwk.crv as string, x: jwk.x as string, y: jwk.y as string },
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    spkiDer: publicKey.export({ format: 'der', type: 'spki' }),
  }
}
