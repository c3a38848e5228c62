import { X509Certificate } from 'node:crypto'

const MAX_ENTRIES = 1000
// Wallets send x5c: bound what one entry may hold, so the cache cannot be grown into a memory sink.
const MAX_CACHED_LENGTH = 8192
const parsed = new Map<string, X509Certificate>()

/**
 * A certificate (PEM, or base64 DER as in `x5c`) parsed once per process: the same issuer and
 * trust-anchor certificates arrive with every presentation and request, and parsing costs far
 * more than the lookup. Parsing is a pure function of the text, so the cache needs no invalidation.
 */
export function parseCertificate(text: string): X509Certificate {
  const cached = parsed.get(text)
  if (cached) return cached
  const certificate = new X509Certificate(text.includes('-----BEGIN') ? text : Buffer.from(text, 'base64'))
  if (text.length > MAX_CACHED_LENGTH) return certificate
  if (parsed.size >= MAX_ENTRIES) parsed.delete(parsed.keys().next().value as string)
  parsed.set(text, certificate)
  return certificate
}

/** A PEM certificate as an `x5c` entry: base64 DER (RFC 7515 §4.1.6). */
export const x5cEntry = (pem: string): string => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '')

/** Issued by itself and signed with its own key (PEM or base64 DER): a trust anchor, not a leaf HAIP accepts. */
export function isSelfSigned(certificate: string | X509Certificate): boolean {
  const parsed = typeof certificate === 'string' ? parseCertificate(certificate) : certificate
  // Not checkIssued: OpenSSL also wants keyCertSign there, which a self-signed leaf lacks.
  return parsed.issuer === parsed.subject && parsed.verify(parsed.publicKey)
}
