import { createPrivateKey, type JsonWebKey, sign as signBytes } from 'node:crypto'
import { createCertificate, x5cEntry } from '@credential-service/crypto'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose'

/** Keys, JWTs and certificate chains of wallets and wallet providers (made at test time). */
export interface KeyPair {
  privateJwk: JWK
  publicJwk: JWK
  jkt: string
}

export async function keyPair(alg: 'ES256' | 'RS256' | 'ES512' | 'Ed25519' = 'ES256'): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const publicJwk = await exportJWK(publicKey)
  return { privateJwk: await exportJWK(privateKey), publicJwk, jkt: await calculateJwkThumbprint(publicJwk) }
}

export const sign = async (key: KeyPair, header: Record<string, unknown>, payload: Record<string, unknown>) =>
  new SignJWT(payload)
    .setProtectedHeader({ alg: 'ES256', ...header } as never)
    .sign(await importJWK(key.privateJwk, String(header.alg ?? 'ES256')))

/**
 * An ES256 JWS over exactly this header and payload, unchecked: jose refuses to sign what a
 * verifier must refuse (an unknown `crit`, checklist S-10).
 */
export function signUnchecked(
  key: KeyPair,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
) {
  const input = [header, payload]
    .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
    .join('.')
  const privateKey = createPrivateKey({ key: key.privateJwk as JsonWebKey, format: 'jwk' })
  const signature = signBytes('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' })
  return `${input}.${signature.toString('base64url')}`
}

/** The JWT with one byte of its signature flipped (checklist S-04). */
export function flipSignature(jwt: string): string {
  const [header, payload, signature] = jwt.split('.') as [string, string, string]
  const bytes = Buffer.from(signature, 'base64url')
  bytes[0] = (bytes[0] as number) ^ 0x01
  return `${header}.${payload}.${bytes.toString('base64url')}`
}

/** A certificate for `subject`'s key, signed by `issuer` (or by itself), valid 30 days from its start. */
export async function certificate(
  subject: KeyPair,
  name: string,
  options: {
    issuer?: { key: KeyPair; pem: string }
    ca?: boolean
    pathLength?: number
    daysAgo?: number
  } = {},
) {
  return createCertificate({
    subjectPublicJwk: subject.publicJwk,
    subject: name,
    issuerPrivateJwk: (options.issuer?.key ?? subject).privateJwk,
    ...(options.issuer ? { issuerCertificate: options.issuer.pem } : {}),
    validityDays: 30,
    ...(options.daysAgo ? { now: new Date(Date.now() - options.daysAgo * 86_400_000) } : {}),
    ...(options.ca ? { ca: true, pathLength: options.pathLength ?? 0 } : {}),
  })
}

/**
 * A trust anchor (CA) and an attester certificate it issued; with `intermediate`, through an
 * intermediate CA (x5c: leaf, intermediate).
 */
export async function attester(name: string, options: { intermediate?: boolean } = {}) {
  const root = await keyPair()
  const leaf = await keyPair()
  const rootName = `CN=${name} Root`
  const rootPem = await certificate(root, rootName, {
    ca: true,
    pathLength: options.intermediate ? 1 : 0,
  })
  if (options.intermediate) {
    const middle = await keyPair()
    const middlePem = await certificate(middle, `CN=${name} Intermediate`, {
      issuer: { key: root, pem: rootPem },
      ca: true,
    })
    const leafPem = await certificate(leaf, `CN=${name} Attester`, {
      issuer: { key: middle, pem: middlePem },
    })
    return { root, rootName, leaf, rootPem, leafPem, x5c: [x5cEntry(leafPem), x5cEntry(middlePem)] }
  }
  const leafPem = await certificate(leaf, `CN=${name} Attester`, { issuer: { key: root, pem: rootPem } })
  return { root, rootName, leaf, rootPem, leafPem, x5c: [x5cEntry(leafPem)] }
}

/** A self-signed copy of the attester's root: same key and subject, a new serial (HAIP §4.5.1). */
export async function selfSignedCopy(of: Awaited<ReturnType<typeof attester>>) {
  return x5cEntry(await certificate(of.root, of.rootName, { ca: true }))
}
