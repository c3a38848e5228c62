import { createHash } from 'node:crypto'
import { RuleViolationError } from '@credential-service/core-domain'
import { parseCertificate } from './parsed-certificates'

/**
 * OpenID4VP §5.9.3 client identifiers of a verifier whose requests are signed with the
 * certificate `leafPem`: `x509_san_dns:<first SAN dNSName>` or `x509_hash:<base64url SHA-256 of the DER>`.
 */
export function verifierClientId(prefix: 'x509_san_dns' | 'x509_hash', leafPem: string): string {
  const certificate = parseCertificate(leafPem)
  if (prefix === 'x509_hash')
    return `x509_hash:${createHash('sha256').update(certificate.raw).digest('base64url')}`
  const dns = certificate.subjectAltName
    ?.split(',')
    .map((entry) => entry.trim())
    .find((entry) => entry.startsWith('DNS:'))
    ?.slice(4)
  // A configuration fault the operator fixes (another key chain or prefix), not a server fault.
  if (!dns)
    throw new RuleViolationError(
      'the signing certificate has no SAN dNSName for an x509_san_dns client identifier',
    )
  return `x509_san_dns:${dns}`
}
