import type { X509Certificate } from 'node:crypto'
import { certificateFacts } from './certificate-facts'
import { parseCertificate } from './parsed-certificates'

/**
 * SD-JWT VC §3.5 (checklist S-131): with `x5c`, `iss` names the leaf. A `dns:` iss must be a
 * dNSName SAN; any other iss a uniformResourceIdentifier SAN, or, for an https iss, a dNSName equal
 * to its host (certificates of web issuers often carry only the host). No `iss`: nothing to match.
 * Returns the refusal, or undefined. The verifier checks presentations with it, the issuer its own leaves.
 */
export async function issuerNameRefusal(iss: unknown, leaf: X509Certificate): Promise<string | undefined> {
  if (iss === undefined) return undefined
  const { uris, dnsNames } = await certificateFacts(leaf)
  const names = dnsNames.map((name) => name.toLowerCase())
  if (typeof iss === 'string') {
    if (iss.startsWith('dns:') ? names.includes(iss.slice(4).toLowerCase()) : uris.includes(iss))
      return undefined
    if (iss.startsWith('https://') && names.includes(hostOf(iss))) return undefined
  }
  return `iss ${String(iss)} is not a subjectAltName (URI or dNSName) of the x5c leaf`
}

/** Whether the leaf (PEM, or base64 DER as in `x5c`) names `iss` (issuerNameRefusal). */
export async function certificateNamesIssuer(leaf: string, iss: string): Promise<boolean> {
  return (await issuerNameRefusal(iss, parseCertificate(leaf))) === undefined
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).hostname.toLowerCase()
  } catch {
    return ''
  }
}
