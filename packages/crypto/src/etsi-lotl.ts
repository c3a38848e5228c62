import { verifySignedList } from './etsi-signed-list'
import { digitalIdCertificates, schemeDates } from './etsi-trusted-list'
import { child, children, TrustedListError, text } from './etsi-xml'
import type { XmlNode } from './xml-modules'

/** The MimeType of a pointer to a list in XML (the others point to the PDF form). */
export const TSL_XML_MIME = 'application/vnd.etsi.tsl+xml'

/** TS 119 612 §5.3.13: one OtherTSLPointer the service follows. */
export interface TrustedListPointer {
  /** SchemeTerritory of the pointed list, e.g. `DE`. */
  territory: string
  /** TSLLocation: where the pointed list is fetched. */
  location: string
  /** ServiceDigitalIdentities: the certificates allowed to sign the pointed list (PEM). */
  certificates: string[]
}

export interface ListOfTrustedLists {
  pointers: TrustedListPointer[]
  listIssuedAt: Date | null
  nextUpdate: Date | null
}

/**
 * The OtherInformation values of a pointer's AdditionalInformation, by local name: TSLType and
 * SchemeTerritory are TS 119 612 elements, MimeType is one of the additional types
 * (http://uri.etsi.org/02231/v2/additionaltypes#, as the EU LOTL writes it) or a tsl one.
 */
function additionalInformation(pointer: XmlNode): Map<string, string> {
  const values = new Map<string, string>()
  for (const info of children(child(pointer, 'AdditionalInformation') ?? pointer, 'OtherInformation')) {
    for (let node = info.firstChild; node; node = node.nextSibling) {
      if (node.nodeType === 1 && node.localName && !values.has(node.localName))
        values.set(node.localName, text(node))
    }
  }
  return values
}

/**
 * Verifies an ETSI TS 119 612 list of trusted lists (LOTL; signature and XAdES signed properties
 * as for any TS 119 612 list, with `signerCertificates`) and reads its PointersToOtherTSL
 * (§5.3.13): each OtherTSLPointer whose MimeType is the XML one, that is not a pointer to a list of
 * lists (the LOTL's pointer to itself), and whose SchemeTerritory is in `territories` (all when
 * absent), with its TSLLocation and ServiceDigitalIdentities. A followed pointer without a
 * location or without a certificate is refused: its list could never be checked.
 */
export async function readListOfTrustedLists(
  xml: string,
  signerCertificates: string[],
  territories?: string[],
  now: Date = new Date(),
): Promise<ListOfTrustedLists> {
  const list = await verifySignedList(xml, signerCertificates, now)
  const wanted = territories?.length ? new Set(territories.map((t) => t.toUpperCase())) : undefined
  const scheme = child(list, 'SchemeInformation')
  const pointers: TrustedListPointer[] = []
  for (const pointer of children(child(scheme, 'PointersToOtherTSL') ?? list, 'OtherTSLPointer')) {
    const info = additionalInformation(pointer)
    if (info.get('MimeType') !== TSL_XML_MIME) continue
    if (/listofthelists$/i.test(info.get('TSLType') ?? '')) continue
    const territory = info.get('SchemeTerritory') ?? ''
    if (wanted && !wanted.has(territory.toUpperCase())) continue
    const location = text(child(pointer, 'TSLLocation'))
    const certificates = children(
      child(pointer, 'ServiceDigitalIdentities') ?? pointer,
      'ServiceDigitalIdentity',
    ).flatMap((identity) => digitalIdCertificates(identity))
    if (!location) throw new TrustedListError(`the pointer of territory ${territory} has no TSLLocation`)
    if (!certificates.length)
      throw new TrustedListError(
        `the pointer of territory ${territory} (${location}) names no certificate (ServiceDigitalIdentities)`,
      )
    pointers.push({ territory, location, certificates })
  }
  const { listIssuedAt, nextUpdate } = schemeDates(list)
  return { pointers, listIssuedAt, nextUpdate }
}
