import { createHash, createPrivateKey, createPublicKey, type KeyLike, sign, verify } from 'node:crypto'
import type { SignedXmlInstance } from './xml-modules'

/**
 * XMLDSig 1.1 §6.4.3 ECDSA signature methods for xml-crypto, which ships RSA ones only: they are
 * registered on a SignedXml instance (xml-crypto's documented extension point, "Customizing
 * Algorithms"). The SignatureValue is r||s (IEEE P1363), not DER; node:crypto signs and verifies.
 */
export const ECDSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256'
export const ECDSA_SHA384 = 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384'
export const ECDSA_SHA512 = 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512'
/** XMLDSig 1.1 §6.2 (RFC 6931): the SHA-384 digest, which xml-crypto does not ship either. */
export const SHA384_DIGEST = 'http://www.w3.org/2001/04/xmldsig-more#sha384'

const ecdsa = (uri: string, hash: string) =>
  class {
    getAlgorithmName = () => uri

    /** Only an EC key verifies: an RSA signer certificate never accepts an ECDSA method. */
    verifySignature = (material: string, key: KeyLike, signatureValue: string): boolean => {
      const publicKey = createPublicKey(key)
      if (publicKey.asymmetricKeyType !== 'ec') return false
      return verify(
        hash,
        Buffer.from(material),
        { key: publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signatureValue, 'base64'),
      )
    }

    getSignature = (signedInfo: string, privateKey: KeyLike): string =>
      sign(hash, Buffer.from(signedInfo), {
        key: createPrivateKey(privateKey as string),
        dsaEncoding: 'ieee-p1363',
      }).toString('base64')
  }

class Sha384 {
  getAlgorithmName = () => SHA384_DIGEST
  getHash = (xml: string) => createHash('sha384').update(xml, 'utf8').digest('base64')
}

/** Adds the ECDSA signature methods and the SHA-384 digest to a SignedXml instance. */
export function registerEcdsa(signedXml: SignedXmlInstance): SignedXmlInstance {
  signedXml.SignatureAlgorithms[ECDSA_SHA256] = ecdsa(ECDSA_SHA256, 'sha256')
  signedXml.SignatureAlgorithms[ECDSA_SHA384] = ecdsa(ECDSA_SHA384, 'sha384')
  signedXml.SignatureAlgorithms[ECDSA_SHA512] = ecdsa(ECDSA_SHA512, 'sha512')
  signedXml.HashAlgorithms[SHA384_DIGEST] = Sha384
  return signedXml
}
