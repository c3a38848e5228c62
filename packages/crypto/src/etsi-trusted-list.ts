import { X509Certificate } from 'node:crypto'
import { verifySignedList } from './etsi-signed-list'
import { child, children, listDate, pemOf, TrustedListError, text } from './etsi-xml'
import type { XmlNode } from './xml-modules'

export { listDate, pemOf, TrustedListError }

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
  /** SchemeTerritory of a TS 119 612 list (e.g. `DE`); absent for a LoTE. */
  schemeTerritory?: string
}

/** ListIssueDateTime, NextUpdate and SchemeTerritory of a signed TrustServiceStatusList. */
export function schemeDates(list: XmlNode) {
  const scheme = child(list, 'SchemeInformation')
  return {
    listIssuedAt: listDate(text(child(scheme, 'ListIssueDateTime')), 'ListIssueDateTime'),
    nextUpdate: listDate(text(child(child(scheme, 'NextUpdate'), 'dateTime')), 'NextUpdate'),
    schemeTerritory: text(child(scheme, 'SchemeTerritory')),
  }
}

/** The certificates (PEM) of the X509Certificate children of `DigitalId` elements under `parent`. */
export function digitalIdCertificates(parent: XmlNode | undefined): string[] {
  const certificates: string[] = []
  for (const identity of parent ? children(parent, 'DigitalId') : []) {
    for (const cert of children(identity, 'X509Certificate')) {
      const pem = pemOf(text(cert))
      try {
        new X509Certificate(pem)
        certificates.push(pem)
      } catch {
        // A certificate that does not parse cannot anchor anything; the rest of the list still can.
      }
    }
  }
  return certificates
}

/**
 * Verifies an ETSI TS 119 612 trusted list (signature and XAdES signed properties, see
 * verifySignedList) and reads what was signed: ListIssueDateTime, NextUpdate, SchemeTerritory and
 * the X.509 certificates of the services whose type is one of `serviceTypes` (all when absent) and
 * whose current status is granted.
 */
export async function readTrustedList(
  xml: string,
  signerCertificates: string[],
  serviceTypes?: string[],
  now: Date = new Date(),
): Promise<TrustedListContent> {
  const list = await verifySignedList(xml, signerCertificates, now)
  const wanted = serviceTypes?.length ? new Set(serviceTypes) : undefined
  const certificates = new Set<string>()
  for (const provider of children(child(list, 'TrustServiceProviderList') ?? list, 'TrustServiceProvider')) {
    for (const service of children(child(provider, 'TSPServices') ?? provider, 'TSPService')) {
      const info = child(service, 'ServiceInformation')
      if (!info) continue
      if (wanted && !wanted.has(text(child(info, 'ServiceTypeIdentifier')))) continue
      if (!GRANTED_STATUSES.has(text(child(info, 'ServiceStatus')))) continue
      for (const pem of digitalIdCertificates(child(info, 'ServiceDigitalIdentity'))) certificates.add(pem)
    }
  }
  return { certificates: [...certificates], ...schemeDates(list) }
}
