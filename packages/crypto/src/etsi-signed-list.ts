import { X509Certificate } from 'node:crypto'
import { child, children, DSIG_NS, parseXml, TrustedListError, TSL_NS, text } from './etsi-xml'
import { checkXadesSignedProperties } from './xades'
import { registerEcdsa } from './xml-ecdsa'
import { loadXmlCrypto, type XmlNode } from './xml-modules'
import { prescanXml } from './xml-prescan'

const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'
/** SignedInfo references read: the whole list, the XAdES signed properties, and some room. */
const MAX_REFERENCES = 8

const publicKeyOf = (certificate: X509Certificate) =>
  certificate.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')

/**
 * The configured signer certificates whose key is that of a certificate in the signature's
 * `KeyInfo/X509Data/X509Certificate` (TS 119 612 lists carry the signer's certificate there).
 * KeyInfo is not trusted, it only picks which allowed certificate to check with: refused when it
 * names none of them.
 */
function signersNamedByKeyInfo(signature: XmlNode, signerCertificates: string[]): string[] {
  const named = new Set<string>()
  for (const data of children(child(signature, 'KeyInfo', DSIG_NS) ?? signature, 'X509Data', DSIG_NS)) {
    for (const cert of children(data, 'X509Certificate', DSIG_NS)) {
      try {
        named.add(publicKeyOf(new X509Certificate(Buffer.from(text(cert), 'base64'))))
      } catch {
        // Not a certificate: names nothing.
      }
    }
  }
  if (!named.size)
    throw new TrustedListError(
      'the signature’s KeyInfo names no signer certificate (X509Data/X509Certificate)',
    )
  const signers = signerCertificates.filter((pem) => named.has(publicKeyOf(new X509Certificate(pem))))
  if (!signers.length)
    throw new TrustedListError(
      'the list’s signature does not verify with any of signerCertificates: its KeyInfo names a certificate that is not one of them',
    )
  return signers
}

/**
 * Verifies the enveloped XML signature of an ETSI TS 119 612 TrustServiceStatusList (a trusted
 * list or a list of the lists) against the allowed signer certificates and returns the list as
 * signed. The text passes prescanXml first (no DTD, bounded depth, elements and attributes). The
 * signature is checked once, with the allowed certificate its KeyInfo names. xml-crypto does XMLDSig core validation (every reference's digest, then the
 * SignatureValue; RSA, and ECDSA of XMLDSig 1.1 §6.4.3 through xml-ecdsa), one reference must
 * cover the whole list (empty URI, enveloped transform), and the XAdES signed properties TS 119 612
 * §5.7 requires must name the certificate that verified (see xades). Only signed bytes are returned,
 * so content outside the signature is ignored.
 */
export async function verifySignedList(
  xml: string,
  signerCertificates: string[],
  now: Date = new Date(),
): Promise<XmlNode> {
  prescanXml(xml)
  const { SignedXml } = await loadXmlCrypto()
  const root = (await parseXml(xml)).documentElement as XmlNode
  if (root.localName !== 'TrustServiceStatusList' || root.namespaceURI !== TSL_NS)
    throw new TrustedListError('not an ETSI TS 119 612 TrustServiceStatusList')
  const signature = child(root, 'Signature', DSIG_NS)
  if (!signature) throw new TrustedListError('the list is not signed (no enveloped ds:Signature)')

  const signers = signersNamedByKeyInfo(signature, signerCertificates)
  // Each reference costs xml-crypto a pass over the document; a list needs two (list, properties).
  const declared = children(child(signature, 'SignedInfo', DSIG_NS) ?? signature, 'Reference', DSIG_NS)
  if (declared.length > MAX_REFERENCES)
    throw new TrustedListError(`the signature has ${declared.length} references, more than ${MAX_REFERENCES}`)

  // Checked once, with the signer KeyInfo names: several certificates may hold that key (a
  // renewed certificate), and all of them verify alike; XAdES names one of them.
  const verifier = registerEcdsa(
    // XAdES names SignedProperties by `Id`; each id attribute costs a pass over the document.
    new SignedXml({ publicCert: signers[0], getCertFromKeyInfo: () => null, idAttributes: ['Id'] }),
  )
  verifier.loadSignature(signature)
  let valid = false
  try {
    valid = verifier.checkSignature(xml)
  } catch {
    valid = false
  }
  const references = verifier.getReferences()
  const whole = references.find(
    (reference) => reference.uri === '' && reference.transforms.includes(ENVELOPED),
  )?.signedReference
  if (!valid || !whole) {
    throw new TrustedListError(
      'the list’s signature does not verify with the certificate its KeyInfo names (or does not cover the whole list)',
    )
  }
  await checkXadesSignedProperties(signature, references, signers, now)

  const list = (await parseXml(whole)).documentElement as XmlNode
  if (list.localName !== 'TrustServiceStatusList' || list.namespaceURI !== TSL_NS)
    throw new TrustedListError('the signature does not cover the TrustServiceStatusList')
  return list
}
