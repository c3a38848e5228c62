import type { X509Certificate } from 'node:crypto'
import type { PresentationConfig } from '@credential-service/core-domain'
import { parseCertificate } from '@credential-service/crypto'
import type { KeyChainRow } from '@credential-service/db-schema'

/**
 * The certificates a tenant trusts for credential issuers (HAIP 6.1.1, checklist V-32): the
 * configuration's trust anchors, its trust lists' certificates and the tenant's own key chains
 * (roots and self-signed leaves).
 */
export function trustAnchors(
  keyChains: KeyChainRow[],
  config: PresentationConfig,
  /** The current certificates of the configuration's trust lists (trust-lists.ts). */
  listCertificates: string[] = [],
): X509Certificate[] {
  // A registrar's access CA vouches for who the relying party is, not for credential issuers:
  // of a registrar-issued chain only its own leaf is trusted, never the registrar's CAs.
  const anchorOf = (chain: string[], mode: string | null) =>
    mode === 'registrar' ? chain.slice(0, 1) : chain.slice(-1)
  const own = keyChains.flatMap((row) => [
    ...(row.rootCertificate ? [row.rootCertificate] : []),
    ...anchorOf(row.activeCertificates, row.certificateMode),
    ...anchorOf(row.previousCertificates ?? [], row.previousCertificateMode),
  ])
  return [...(config.trustAnchors ?? []), ...listCertificates, ...own].flatMap((pem) => {
    try {
      return [parseCertificate(pem)]
    } catch {
      return []
    }
  })
}
