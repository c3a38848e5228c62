import type { PresentationConfig } from '@credential-service/core-domain'
import { canonicalHash } from '@credential-service/crypto'
import type { RegistrationCertificateRow } from '@credential-service/db-schema'

/**
 * `verifier_info` (OpenID4VP 1.0 §5.1): the registration certificate the registrar issued for
 * this configuration, while it was issued for the DCQL query the configuration holds now and has
 * not expired; otherwise none (a stale certificate would describe another request). Request
 * objects by reference and signed Digital Credentials API requests carry the same.
 */
export function verifierInfoOf(
  certificate: RegistrationCertificateRow | undefined,
  config: Pick<PresentationConfig, 'dcqlQuery'>,
  now: Date,
): { format: 'registration_cert'; data: string }[] | undefined {
  if (!certificate || certificate.dcqlHash !== canonicalHash(config.dcqlQuery)) return undefined
  if (certificate.expiresAt && certificate.expiresAt <= now) return undefined
  return [{ format: 'registration_cert', data: certificate.jwt }]
}
