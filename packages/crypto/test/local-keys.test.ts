import { compactVerify, importJWK } from 'jose'
import { describe, expect, it } from 'vitest'
import { createCertificate, parseCertificateChain } from '../src/certificates'
import {
  createJwkCipher,
  fingerprintsMatch,
  JwkDecryptionError,
  masterSecretFingerprint,
} from '../src/jwk-cipher'
import { createSignerFactory, jwkContext } from '../src/key-chain-signer'
import { generateKeyPair, importPrivateKey } from '../src/keys'
import { SIGNING_ALGORITHMS, signJws } from '../src/signer'

const SECRET = 'local-keys-test-master-secret-0123456789'
const cipher = createJwkCipher(SECRET)

describe('db provider', () => {
  for (const alg of SIGNING_ALGORITHMS) {
    it(`${alg}: a generated key signs a JWS that jose verifies`, async () => {
      const pair = await generateKeyPair(alg)
      const signerFor = createSignerFactory({ cipher, providers: {} })
      const signer = signerFor(
        {
          tenantId: 't',
          keyChainId: 'kc',
          kmsProvider: 'db',
          externalKeyId: null,
          alg,
          kid: pair.kid,
          encryptedJwk: cipher.encrypt(pair.privateJwk, jwkContext('t', 'kc')),
          x5c: [],
        },
        pair.publicJwk,
      )
      expect(signer.publicJwk).toStrictEqual({ ...pair.publicJwk, kid: pair.kid })
      expect(signer.publicJwk).not.toHaveProperty('d')
      const jws = await signJws(signer, { kid: signer.kid }, { n: 1 })
      const { protectedHeader } = await compactVerify(jws, await importJWK(pair.publicJwk, alg))
      expect(protectedHeader.alg).toBe(alg)
    })
  }

  it('imports a PEM private key and a private JWK; refuses a public key', async () => {
    const pair = await generateKeyPair('ES256')
    const fromJwk = await importPrivateKey(pair.privateJwk)
    expect(fromJwk.kid).toBe(pair.kid)
    const { createPrivateKey } = await import('node:crypto')
    const pem = createPrivateKey({ key: pair.privateJwk as never, format: 'jwk' })
      .export({ format: 'pem', type: 'pkcs8' })
      .toString()
    expect((await importPrivateKey(pem)).kid).toBe(pair.kid)
    await expect(importPrivateKey(pair.publicJwk)).rejects.toThrow(/private key could not be read/)
    // A `d` of another key beside this key's x and y: refused here, not a failure later.
    const other = await generateKeyPair('ES256')
    await expect(importPrivateKey({ ...pair.privateJwk, d: other.privateJwk.d })).rejects.toThrow(
      /does not match the public key/,
    )
  })
})

describe('JWK encryption at rest (AES-256-GCM, key from MASTER_SECRET)', () => {
  it('round-trips, binds the ciphertext to its key chain, and fails on another secret', async () => {
    const pair = await generateKeyPair('ES256')
    const stored = cipher.encrypt(pair.privateJwk, jwkContext('t1', 'kc'))
    expect(stored).toMatch(/^v1\./)
    expect(stored).not.toContain(pair.privateJwk.d as string)
    expect(cipher.decrypt(stored, jwkContext('t1', 'kc'))).toStrictEqual(pair.privateJwk)
    expect(() => cipher.decrypt(stored, jwkContext('t2', 'kc'))).toThrow(JwkDecryptionError)
    expect(() =>
      createJwkCipher('another-master-secret-0123456789abcdef').decrypt(stored, jwkContext('t1', 'kc')),
    ).toThrow(/wrong MASTER_SECRET or tampered data/)
  })

  it('the fingerprint tells two secrets apart', () => {
    expect(fingerprintsMatch(masterSecretFingerprint(SECRET), masterSecretFingerprint(SECRET))).toBe(true)
    expect(fingerprintsMatch(masterSecretFingerprint(SECRET), masterSecretFingerprint(`${SECRET}x`))).toBe(
      false,
    )
  })
})

describe('certificates', () => {
  it('an internal CA issues a leaf; the chain parses and links; x5c is base64 DER', async () => {
    const root = await generateKeyPair('ES256')
    const leaf = await generateKeyPair('ES256')
    const rootPem = await createCertificate({
      subjectPublicJwk: root.publicJwk,
      issuerPrivateJwk: root.privateJwk,
      subject: 'CN=Root',
      validityDays: 3650,
      ca: true,
    })
    const leafPem = await createCertificate({
      subjectPublicJwk: leaf.publicJwk,
      issuerPrivateJwk: root.privateJwk,
      issuerCertificate: rootPem,
      subject: 'CN=Leaf',
      validityDays: 365,
      dnsNames: ['verifier.example.com'],
    })
    const chain = await parseCertificateChain([leafPem, rootPem], leaf.publicJwk)
    expect(chain.leafKid).toBe(leaf.kid)
    expect(chain.x5c).toHaveLength(2)
    expect(Buffer.from(chain.x5c[0] as string, 'base64')[0]).toBe(0x30) // DER SEQUENCE
    const { X509Certificate } = await import('node:crypto')
    const parsed = new X509Certificate(leafPem)
    expect(parsed.subjectAltName).toBe('DNS:verifier.example.com')
    expect(parsed.checkIssued(new X509Certificate(rootPem))).toBe(true)
  })

  it('refuses a chain whose leaf is another key, or whose links do not verify', async () => {
    const a = await generateKeyPair('ES256')
    const b = await generateKeyPair('ES256')
    const aPem = await createCertificate({
      subjectPublicJwk: a.publicJwk,
      issuerPrivateJwk: a.privateJwk,
      subject: 'CN=A',
      validityDays: 1,
    })
    const bPem = await createCertificate({
      subjectPublicJwk: b.publicJwk,
      issuerPrivateJwk: b.privateJwk,
      subject: 'CN=B',
      validityDays: 1,
    })
    await expect(parseCertificateChain([aPem], b.publicJwk)).rejects.toThrow(/certificate 0 does not certify/)
    await expect(parseCertificateChain([aPem, bPem], a.publicJwk)).rejects.toThrow(
      /certificate 0 is not issued by certificate 1/,
    )
    await expect(parseCertificateChain(['not a certificate'], a.publicJwk)).rejects.toThrow(
      /certificate 0 is not a valid/,
    )
  })

  it('RFC 5280 §6.1, S-127: an imported chain whose issuer is not a CA is refused', async () => {
    const root = await generateKeyPair('ES256')
    const plain = await generateKeyPair('ES256')
    const leaf = await generateKeyPair('ES256')
    const rootPem = await createCertificate({
      subjectPublicJwk: root.publicJwk,
      issuerPrivateJwk: root.privateJwk,
      subject: 'CN=Root',
      validityDays: 30,
      ca: true,
      pathLength: 1,
    })
    const plainPem = await createCertificate({
      subjectPublicJwk: plain.publicJwk,
      issuerPrivateJwk: root.privateJwk,
      issuerCertificate: rootPem,
      subject: 'CN=Plain',
      validityDays: 30,
    })
    const leafPem = await createCertificate({
      subjectPublicJwk: leaf.publicJwk,
      issuerPrivateJwk: plain.privateJwk,
      issuerCertificate: plainPem,
      subject: 'CN=Leaf',
      validityDays: 30,
    })
    await expect(parseCertificateChain([leafPem, plainPem, rootPem], leaf.publicJwk)).rejects.toThrow(
      'chain certificate 1 is not a CA (basicConstraints cA)',
    )
    // Without the root, the intermediate is the chain's own anchor, and still may not issue.
    await expect(parseCertificateChain([leafPem, plainPem], leaf.publicJwk)).rejects.toThrow(
      'the trust anchor is not a CA (basicConstraints cA)',
    )
  })
})
