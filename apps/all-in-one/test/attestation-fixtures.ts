import { createCertificate, x5cEntry } from '@credential-service/crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose'

/** Keys, JWTs and certificate chains of wallets and wallet providers (made at test time). */
export interface KeyPair {
  privateJwk: JWK
  publicJwk: JWK
  jkt: string
}

export async function keyPair(alg: 'ES256' | 'RS256' | 'ES512' = 'ES256'): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const publicJwk = await exportJWK(publicKey)
  return { privateJwk: await exportJWK(privateKey), publicJwk, jkt: await calculateJwkThumbprint(publicJwk) }
}

export const sign = async (key: KeyPair, header: Record<string, unknown>, payload: Record<string, unknown>) =>
  new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', ...header } as never)
    .sign(await importJWK(key.privateJwk, String(header.alg ?? 'ES256')))

/** The JWT with one byte of its signature flipped (checklist S-04). */
export function flipSignature(jwt: string): string {
  const [header, payload, signature] = jwt.split('.') as [string, string, string]
  const bytes = Buffer.from(signature, 'base64url')
  bytes[0] = (bytes[0] as number) ^ 0x01
  return `${header}.${payload}.${bytes.toString('base64url')}`
}

/** A trust anchor (CA) and an attester certificate it issued. */
export async function attester(name: string) {
  const root = await keyPair()
  const leaf = await keyPair()
  const rootPem = await createCertificate({
    subjectPublicJwk: root.publicJwk,
    subject: `CN=${name} Root`,
    issuerPrivateJwk: root.privateJwk,
    validityDays: 30,
    ca: true,
  })
  const leafPem = await createCertificate({
    subjectPublicJwk: leaf.publicJwk,
    subject: `CN=${name} Attester`,
    issuerPrivateJwk: root.privateJwk,
    issuerCertificate: rootPem,
    validityDays: 30,
  })
  return { root, leaf, rootPem, leafPem, x5c: [x5cEntry(leafPem)] }
}
