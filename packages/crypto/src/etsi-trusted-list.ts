import { X509Certificate } from 'node:crypto'
import { registerEcdsa } from './xml-ecdsa'
import { loadXmlCrypto, loadXmlDom, type XmlNode } from './xml-modules'

/** ETSI TS 119 612 namespace of the trusted list elements. */
const TSL_NS = 'http://uri.etsi.org/02231/v2#'
const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'
/** TS 119 612 §5.5.4: the statuses under which a service's certificates are trusted. */
const GRANTED_STATUSES = new Set([
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted',
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/recognisedatnationallevel',
  // EUDI trusted lists (TS 119 612 v2.x profiles) mark listed entities this way.
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/undersupervision',
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/accredited',
])

export interface TrustedListContent {
  certificates: string[]
  listIssuedAt: Date | null
  nextUpdate: Date | null
}

export class TrustedListError extends Error {}

type XmlElement = XmlNode

function children(parent: XmlElement, name: string, ns = TSL_NS): XmlElement[] {
  const found: XmlElement[] = []
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    const element = node as XmlElement
    if (node.nodeType === 1 && element.localName === name && element.namespaceURI === ns) found.push(element)
  }
  return found
}

const child = (parent: XmlElement | undefined, name: string, ns = TSL_NS) =>
  parent ? children(parent, name, ns)[0] : undefined
const text = (element: XmlElement | undefined) => element?.textContent?.trim() ?? ''

/** A date of a list (ISO 8601 text; empty: none), or the refusal naming what it is. */
export function listDate(value: string, what: string): Date | null {
  if (!value) return null
  const parsed = new Date(value)
  if (Number.isNaN(parsed.getTime()))
    throw new TrustedListError(`${what} is not a date: ${value.slice(0, 40)}`)
  return parsed
}

/** The PEM of a base64 DER certificate as the lists carry it (any whitespace inside). */
export const pemOf = (base64: string) =>
  `-----BEGIN CERTIFICATE-----\n${base64
    .replace(/\s+/g, '')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`

/**
 * Verifies the enveloped XML signature of an ETSI TS 119 612 trusted list against the allowed
 * signer certificates (xml-crypto: XMLDSig core validation; RSA signatures, and the ECDSA ones of
 * XMLDSig 1.1 §6.4.3 that TS 119 612 §5.7 lists are signed with too, see xml-ecdsa) and reads what was
 * signed: ListIssueDateTime, NextUpdate and the X.509 certificates of the services whose type is
 * one of `serviceTypes` (all when absent) and whose current status is granted. Only the signed
 * bytes (xml-crypto's signed references) are read, so content outside the signature is ignored.
 */
export async function readTrustedList(
  xml: string,
  signerCertificates: string[],
  serviceTypes?: string[],
): Promise<TrustedListContent> {
  const [{ DOMParser }, { SignedXml }] = await Promise.all([loadXmlDom(), loadXmlCrypto()])
  const parse = (source: string) => {
    const errors: string[] = []
    const doc = new DOMParser({
      errorHandler: { error: (m: string) => errors.push(m), fatalError: (m: string) => errors.push(m) },
    }).parseFromString(source, 'application/xml')
    if (errors.length || !doc.documentElement) throw new TrustedListError('the list is not well-formed XML')
    return doc
  }
  const doc = parse(xml)
  const root = doc.documentElement as XmlElement
  if (root.localName !== 'TrustServiceStatusList' || root.namespaceURI !== TSL_NS)
    throw new TrustedListError('not an ETSI TS 119 612 TrustServiceStatusList')
  const signature = child(root, 'Signature', DSIG_NS)
  if (!signature) throw new TrustedListError('the list is not signed (no enveloped ds:Signature)')

  let signed: string | undefined
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
    // The reference must cover the whole list: the empty URI with the enveloped transform.
    signed = verifier
      .getReferences()
      .find((reference) => reference.uri === '' && reference.transforms.includes(ENVELOPED))?.signedReference
    if (signed) break
  }
  if (!signed) {
    throw new TrustedListError(
      'the list’s signature does not verify with any of signerCertificates (or does not cover the whole list)',
    )
  }

  const list = parse(signed).documentElement as XmlElement
  if (list.localName !== 'TrustServiceStatusList' || list.namespaceURI !== TSL_NS)
    throw new TrustedListError('the signature does not cover the TrustServiceStatusList')
  const scheme = child(list, 'SchemeInformation')
  const listIssuedAt = listDate(text(child(scheme, 'ListIssueDateTime')), 'ListIssueDateTime')
  const nextUpdate = listDate(text(child(child(scheme, 'NextUpdate'), 'dateTime')), 'NextUpdate')
  const wanted = serviceTypes?.length ? new Set(serviceTypes) : undefined
  const certificates = new Set<string>()
  for (const provider of children(child(list, 'TrustServiceProviderList') ?? list, 'TrustServiceProvider')) {
    for (const service of children(child(provider, 'TSPServices') ?? provider, 'TSPService')) {
      const info = child(service, 'ServiceInformation')
      if (!info) continue
      if (wanted && !wanted.has(text(child(info, 'ServiceTypeIdentifier')))) continue
      if (!GRANTED_STATUSES.has(text(child(info, 'ServiceStatus')))) continue
      for (const identity of children(child(info, 'ServiceDigitalIdentity') ?? info, 'DigitalId')) {
        for (const cert of children(identity, 'X509Certificate')) {
          const pem = pemOf(text(cert))
          try {
            new X509Certificate(pem)
            certificates.add(pem)
          } catch {
            // A certificate that does not parse cannot anchor anything; the rest of the list still can.
          }
        }
      }
    }
  }
  return { certificates: [...certificates], listIssuedAt, nextUpdate }
}
