import { createHash, X509Certificate } from 'node:crypto'
import { child, children, DSIG_NS, parseXml, TrustedListError, text } from './etsi-xml'
import type { XmlNode, XmlReference } from './xml-modules'

export const XADES_NS = 'http://uri.etsi.org/01903/v1.3.2#'
/** EN 319 132-1 §4.3.5.1 / XAdES: the Type of the SignedInfo reference to SignedProperties. */
export const SIGNED_PROPERTIES_TYPE = 'http://uri.etsi.org/01903#SignedProperties'
/** How far a SigningTime may lie ahead of this clock (the signer's clock may run ahead). */
const SIGNING_TIME_SKEW_MS = 5 * 60_000

/** DigestMethod URIs of CertDigest (XMLDSig, RFC 6931) and their node:crypto names. */
const CERT_DIGESTS: Record<string, string> = {
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512',
}

const refuse = (why: string): never => {
  throw new TrustedListError(`XAdES (ETSI EN 319 132-1, TS 119 612 §5.7): ${why}`)
}

/**
 * Checks the XAdES signed properties of a signature xml-crypto has verified: SignedInfo must hold a
 * Reference of Type SignedProperties (xml-crypto checked its digest like every reference's, the
 * target found by its `Id`), and what it signed must name one of `verifiedBy` (the certificates
 * the signature verified with) in SigningCertificateV2 (or SigningCertificate) CertDigest, with a
 * SigningTime, when given, not in the future. Only the signed bytes of the reference are read.
 */
export async function checkXadesSignedProperties(
  signature: XmlNode,
  references: XmlReference[],
  verifiedBy: string[],
  now: Date,
): Promise<void> {
  const typed = children(child(signature, 'SignedInfo', DSIG_NS) ?? signature, 'Reference', DSIG_NS).filter(
    (reference) => reference.getAttribute('Type') === SIGNED_PROPERTIES_TYPE,
  )
  if (typed.length !== 1)
    refuse(
      typed.length
        ? 'more than one SignedInfo Reference of Type SignedProperties'
        : `the list has no XAdES signed properties (no SignedInfo Reference of Type ${SIGNED_PROPERTIES_TYPE})`,
    )
  const uri = typed[0]?.getAttribute('URI') ?? ''
  const signed = references.find((reference) => reference.uri === uri)?.signedReference
  if (!uri.startsWith('#') || !signed) refuse(`the SignedProperties reference ${uri} was not verified`)
  const properties = (await parseXml(signed as string, 'the SignedProperties')).documentElement as XmlNode
  if (properties.localName !== 'SignedProperties' || properties.namespaceURI !== XADES_NS)
    refuse(`the reference ${uri} of Type SignedProperties is no xades:SignedProperties`)
  const signatureProperties = child(properties, 'SignedSignatureProperties', XADES_NS)

  const signingTime = text(child(signatureProperties, 'SigningTime', XADES_NS))
  if (signingTime) {
    const at = new Date(signingTime)
    if (Number.isNaN(at.getTime())) refuse(`SigningTime is not a date: ${signingTime.slice(0, 40)}`)
    if (at.getTime() > now.getTime() + SIGNING_TIME_SKEW_MS)
      refuse(`SigningTime ${signingTime} is in the future`)
  }

  const signingCertificate =
    child(signatureProperties, 'SigningCertificateV2', XADES_NS) ??
    child(signatureProperties, 'SigningCertificate', XADES_NS)
  if (!signingCertificate)
    refuse('the signed properties have no SigningCertificateV2 (or SigningCertificate)')
  const ders = verifiedBy.map((pem) => new X509Certificate(pem).raw)
  const named = children(signingCertificate as XmlNode, 'Cert', XADES_NS).some((cert) => {
    const certDigest = child(cert, 'CertDigest', XADES_NS)
    const algorithm =
      CERT_DIGESTS[child(certDigest, 'DigestMethod', DSIG_NS)?.getAttribute('Algorithm') ?? '']
    const value = text(child(certDigest, 'DigestValue', DSIG_NS)).replace(/\s+/g, '')
    return (
      algorithm !== undefined &&
      ders.some((der) => createHash(algorithm).update(der).digest('base64') === value)
    )
  })
  if (!named) refuse('no SigningCertificateV2 CertDigest matches the certificate that verified the signature')
}
