import { createJwkCipher } from '../src/jwk-cipher'
import { createSignerFactory, jwkContext } from '../src/key-chain-signer'
import { generateKeyPair, type KeyPairJwks } from '../src/keys'
import type { SigningAlgorithm } from '../src/signer'

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
