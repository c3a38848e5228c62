import { child, DSIG_NS, parseXml, TrustedListError, TSL_NS } from './etsi-xml'
import { checkXadesSignedProperties } from './xades'
import { registerEcdsa } from './xml-ecdsa'
import { loadXmlCrypto, type XmlNode, type XmlReference } from './xml-modules'

const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

/**
 * Verifies the enveloped XML signature of an ETSI TS 119 612 TrustServiceStatusList (a trusted
 * list or a list of the lists) against the allowed signer certificates and returns the list as
 * signed. xml-crypto does XMLDSig core validation (every reference's digest, then the
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
  const { SignedXml } = await loadXmlCrypto()
  const root = (await parseXml(xml)).documentElement as XmlNode
  if (root.localName !== 'TrustServiceStatusList' || root.namespaceURI !== TSL_NS)
    throw new TrustedListError('not an ETSI TS 119 612 TrustServiceStatusList')
  const signature = child(root, 'Signature', DSIG_NS)
  if (!signature) throw new TrustedListError('the list is not signed (no enveloped ds:Signature)')

  let signed: { xml: string; references: XmlReference[] } | undefined
  const verifiedBy: string[] = []
  for (const pem of signerCertificates) {
    const verifier = registerEcdsa(new SignedXml({ publicCert: pem, getCertFromKeyInfo: () => null }))
    verifier.loadSignature(signature)
    let valid = false
    try {
      valid = verifier.checkSignature(xml)
    } catch {
      valid = false
    }
    if (!valid) continue
    const references = verifier.getReferences()
    const whole = references.find(
      (reference) => reference.uri === '' && reference.transforms.includes(ENVELOPED),
    )?.signedReference
    if (!whole) continue
    // Several certificates may hold the signer's key (a renewed certificate): XAdES names one.
    verifiedBy.push(pem)
    signed ??= { xml: whole, references }
  }
  if (!signed) {
    throw new TrustedListError(
      'the list’s signature does not verify with any of signerCertificates (or does not cover the whole list)',
    )
  }
  await checkXadesSignedProperties(signature, signed.references, verifiedBy, now)

  const list = (await parseXml(signed.xml)).documentElement as XmlNode
  if (list.localName !== 'TrustServiceStatusList' || list.namespaceURI !== TSL_NS)
    throw new TrustedListError('the signature does not cover the TrustServiceStatusList')
  return list
}
