import { X509Certificate } from 'node:crypto'
import { compactVerify } from 'jose'
import { listDate, pemOf, type TrustedListContent, TrustedListError } from './etsi-trusted-list'

// biome-ignore lint/suspicious/noExplicitAny: the list's JSON is read field by field, defensively
type Loose = any

const list = (value: unknown): Loose[] => (Array.isArray(value) ? value : [])

/** A date of the list: an ISO string, or `{ dateTime }` as the XML form nests it. */
const date = (value: Loose, what: string): Date | null =>
  listDate(
    typeof value === 'string' ? value : typeof value?.dateTime === 'string' ? value.dateTime : '',
    what,
  )

/**
 * Verifies an ETSI TS 119 602 List of Trusted Entities in its JSON form, signed as a compact JWS
 * (JAdES baseline), with one of the allowed signer certificates (jose; the header's `x5c` is not
 * trusted), and reads its ListIssueDateTime, NextUpdate and the `X509Certificates` of the services
 * whose ServiceTypeIdentifier is one of `serviceTypes` (all when absent). A service that carries a
 * ServiceStatus counts only while it is granted (as in TS 119 612); most LoTEs carry none.
 */
export async function readListOfTrustedEntities(
  jws: string,
  signerCertificates: string[],
  serviceTypes?: string[],
): Promise<TrustedListContent> {
  let payload: Uint8Array | undefined
  for (const pem of signerCertificates) {
    try {
      payload = (await compactVerify(jws.trim(), new X509Certificate(pem).publicKey)).payload
      break
    } catch {
      // Not this signer (or not a JWS at all): the next one may verify it.
    }
  }
  if (!payload)
    throw new TrustedListError('the list’s JWS signature does not verify with any of signerCertificates')
  let parsed: Loose
  try {
    parsed = JSON.parse(new TextDecoder().decode(payload))
  } catch {
    throw new TrustedListError('the signed list is not JSON')
  }
  const lote = parsed?.LoTE ?? parsed
  const scheme = lote?.ListAndSchemeInformation
  if (typeof scheme !== 'object' || scheme === null)
    throw new TrustedListError(
      'not an ETSI TS 119 602 list of trusted entities (no ListAndSchemeInformation)',
    )
  const wanted = serviceTypes?.length ? new Set(serviceTypes) : undefined
  const certificates = new Set<string>()
  for (const entity of list(lote.TrustedEntitiesList)) {
    for (const service of list(entity?.TrustedEntityServices)) {
      const info = service?.ServiceInformation
      if (wanted && !wanted.has(info?.ServiceTypeIdentifier)) continue
      const status = info?.ServiceStatus
      if (typeof status === 'string' && !/\/(granted|recognisedatnationallevel|notified)$/.test(status))
        continue
      for (const certificate of list(info?.ServiceDigitalIdentity?.X509Certificates)) {
        if (typeof certificate?.val !== 'string') continue
        const pem = pemOf(certificate.val)
        try {
          new X509Certificate(pem)
          certificates.add(pem)
        } catch {
          // A certificate that does not parse cannot anchor anything; the rest of the list still can.
        }
      }
    }
  }
  return {
    certificates: [...certificates],
    listIssuedAt: date(scheme.ListIssueDateTime, 'ListIssueDateTime'),
    nextUpdate: date(scheme.NextUpdate, 'NextUpdate'),
  }
}
