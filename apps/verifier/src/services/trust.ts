import type { X509Certificate } from 'node:crypto'
import type { PresentationConfig } from '@credential-service/core-domain'
import { parseCertificate } from '@credential-service/crypto'
import type { KeyChainRow } from '@credential-service/db-schema'

/**
 * The certificates a tenant trusts for credential issuers (HAIP 6.1.1, checklist V-32): the
 * configuration's trust anchors and the tenant's own key chains (roots and self-signed leaves).
 */
export function trustAnchors(keyChains: KeyChainRow[], config: PresentationConfig): X509Certificate[] {
  // A registrar's access CA vouches for who the relying party is, not for credential issuers:
  // of a registrar-issued chain only its own leaf is trusted, never the registrar's CAs.
  const anchorOf = (chain: string[], mode: string | null) =>
    mode === 'registrar' ? chain.slice(0, 1) : chain.slice(-1)
  const own = keyChains.flatMap((row) => [
    ...(row.rootCertificate ? [row.rootCertificate] : []),
    ...anchorOf(row.activeCertificates, row.certificateMode),
    ...anchorOf(row.previousCertificates ?? [], row.previousCertificateMode),
  ])
  return [...(config.trustAnchors ?? []), ...own].flatMap((pem) => {
    try {
      return [parseCertificate(pem)]
    } catch {
      return []
    }
  })
}

/**
 * Checks an `x5c` chain (base64 DER, leaf first) at `now`: each certificate valid and signed by
 * the next, and the last one either a trust anchor or issued by one. Returns the failure, or undefined.
 */
export function checkChain(x5c: unknown, anchors: X509Certificate[], now: Date): string | undefined {
  if (!Array.isArray(x5c) || x5c.length === 0) return 'the credential has no x5c certificate chain'
  let chain: X509Certificate[]
  try {
    chain = x5c.map((der) => parseCertificate(String(der)))
  } catch {
    return 'the x5c chain is not made of X.509 certificates'
  }
  for (const [index, certificate] of chain.entries()) {
    if (new Date(certificate.validFrom) > now || new Date(certificate.validTo) < now)
      return `x5c certificate ${index} is not valid now`
    const next = chain[index + 1]
    if (next && !certificate.verify(next.publicKey))
      return `x5c certificate ${index} is not signed by certificate ${index + 1}`
  }
  const top = chain.at(-1) as X509Certificate
  const trusted = anchors.some(
    (anchor) => anchor.raw.equals(top.raw) || (top.checkIssued(anchor) && top.verify(anchor.publicKey)),
  )
  return trusted ? undefined : 'the issuer does not chain to a trust anchor of this tenant'
}
