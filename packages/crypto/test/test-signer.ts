import { X509Certificate } from 'node:crypto'
import type { JWK } from 'jose'
import { createCertificate } from '../src/certificates'
import { createJwkCipher } from '../src/jwk-cipher'
import { createSignerFactory, jwkContext } from '../src/key-chain-signer'
import { generateKeyPair, type KeyPairJwks } from '../src/keys'
import type { Signer, SigningAlgorithm } from '../src/signer'

const cipher = createJwkCipher('crypto-tests-master-secret-0123456789')

/** A signer (ES256 unless `alg`) over a database-held key generated now, with `x5c` (base64 DER) as its chain. */
export async function testSigner(
  x5c: (pair: KeyPairJwks) => Promise<string[]> = async () => [],
  alg: SigningAlgorithm = 'ES256',
) {
  const pair = await generateKeyPair(alg)
  const signer = createSignerFactory({ cipher, providers: {} })(
    {
      tenantId: 't',
      keyChainId: 'kc',
      kmsProvider: 'db',
      externalKeyId: null,
      alg,
      kid: pair.kid,
      encryptedJwk: cipher.encrypt(pair.privateJwk, jwkContext('t', 'kc')),
      x5c: await x5c(pair),
    },
    pair.publicJwk,
  )
  return signer
}

/** A self-signed CA of a key generated now: a trust anchor of the tests. */
export async function testRoot(subject = 'CN=test root') {
  const keys = await generateKeyPair('ES256')
  const pem = await createCertificate({
    subjectPublicJwk: keys.publicJwk,
    issuerPrivateJwk: keys.privateJwk,
    subject,
    validityDays: 2,
    ca: true,
  })
  return { keys, pem }
}

/** A leaf certificate for `publicJwk` under `root`, naming `uris` (base64 DER, as in `x5c`). */
export async function testLeaf(
  root: { keys: KeyPairJwks; pem: string },
  publicJwk: KeyPairJwks['publicJwk'],
  uris: string[],
) {
  const pem = await createCertificate({
    subjectPublicJwk: publicJwk,
    issuerPrivateJwk: root.keys.privateJwk,
    issuerCertificate: root.pem,
    subject: 'CN=test issuer',
    uris,
    validityDays: 1,
  })
  return new X509Certificate(pem).raw.toString('base64')
}

/** What the VC-JWT tests issue: a ConformanceCredential of `issuer` to `holderJwk`, valid for an hour. */
export const testVcOptions = (signer: Signer, issuer: string, holderJwk: JWK | undefined) => ({
  signer,
  issuer,
  type: ['VerifiableCredential', 'ConformanceCredential'],
  subject: { given_name: 'Erika' },
  issuedAt: new Date(Date.now() - 1000),
  expiresAt: new Date(Date.now() + 3_600_000),
  holderJwk,
})
