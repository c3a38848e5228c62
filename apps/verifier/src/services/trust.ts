import type { X509Certificate } from 'node:crypto'
import type { PresentationConfig } from '@credential-service/core-domain'
import { ISSUER_PROFILE, type PathProfile, parseCertificate, validatePath } from '@credential-service/crypto'
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
 * Path validation of an `x5c` or `x5chain` (base64 DER, leaf first) at `now` against the tenant's
 * anchors (validatePath: RFC 5280 §6.1, checklist S-127). The anchor may be sent along (SD-JWT VC
 * §3.5 does not forbid it); a certificate that is itself an anchor ends the path. Returns the
 * failure, or undefined.
 */
export async function checkChain(
  x5c: unknown,
  anchors: X509Certificate[],
  now: Date,
  profile: PathProfile = ISSUER_PROFILE,
): Promise<string | undefined> {
  if (!Array.isArray(x5c) || x5c.length === 0) return 'the credential has no x5c certificate chain'
  let chain: X509Certificate[]
  try {
    chain = x5c.map((der) => parseCertificate(String(der)))
  } catch {
    return 'the x5c chain is not made of X.509 certificates'
  }
  const validation = await validatePath({ chain, anchors, now, profile })
  if (validation.valid) return undefined
  return validation.untrusted
    ? 'the issuer does not chain to a trust anchor of this tenant'
    : validation.reason
}
