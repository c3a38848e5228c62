import { parseCertificate } from './parsed-certificates'

/**
 * The subject alternative names of a certificate as node:crypto prints them (`DNS:a, URI:b`).
 * Node quotes an entry that holds a comma or a quote as a JSON string, so it is read back as one.
 */
function subjectAltNames(text: string | undefined): { type: string; value: string }[] {
  const entries: { type: string; value: string }[] = []
  for (const match of (text ?? '').matchAll(/([^:,]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g)) {
    const [, type = '', raw = ''] = match
    entries.push({ type: type.trim(), value: raw.startsWith('"') ? (JSON.parse(raw) as string) : raw })
  }
  return entries
}

/**
 * Whether the leaf certificate (PEM, or base64 DER as in `x5c`) names `iss` as SD-JWT VC §3.5
 * asks of an issuer whose key comes by `x5c`: a uniformResourceIdentifier SAN equal to `iss`, or,
 * for an https `iss`, a dNSName SAN equal to its host.
 */
export function certificateNamesIssuer(leaf: string, iss: string): boolean {
  const names = subjectAltNames(parseCertificate(leaf).subjectAltName)
  const host = URL.canParse(iss) && new URL(iss).protocol === 'https:' ? new URL(iss).hostname : undefined
  return names.some(
    ({ type, value }) =>
      (type === 'URI' && value === iss) ||
      (type === 'DNS' && host !== undefined && value.toLowerCase() === host),
  )
}
