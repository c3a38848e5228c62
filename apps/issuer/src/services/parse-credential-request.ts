import { ProtocolError } from '@credential-service/core-domain'

/** A credential request as this issuer reads it (OpenID4VCI 1.0 §8.2). */
export interface CredentialRequest {
  credentialConfigurationId: string
  /**
   * The `proofs` object with exactly one proof type; its content is checked by the proof
   * verification. Undefined when the request carries no `proofs`.
   */
  proofs: Record<string, unknown> | undefined
}

const invalidRequest = (description: string) => new ProtocolError('invalid_credential_request', description)

/**
 * The shape rules of a credential request (OpenID4VCI 1.0 §8.2, §8.3.1.2; checklist S-27, S-28):
 * it names the credential either by `credential_identifier` or by `credential_configuration_id`,
 * never both, and `proofs` holds a single proof type. This issuer returns no
 * `authorization_details` from its token endpoint, so a `credential_identifier` can only be
 * unknown.
 */
export function parseCredentialRequest(body: Record<string, unknown>): CredentialRequest {
  if (body.credential_identifier !== undefined && body.credential_configuration_id !== undefined)
    throw invalidRequest('send credential_identifier or credential_configuration_id, not both')
  if (body.credential_identifier !== undefined) {
    throw new ProtocolError(
      'unknown_credential_identifier',
      'this issuer does not hand out credential identifiers',
    )
  }
  const credentialConfigurationId = body.credential_configuration_id
  if (typeof credentialConfigurationId !== 'string')
    throw invalidRequest('credential_configuration_id is required')
  if (body.proof !== undefined) throw invalidRequest('use proofs (OpenID4VCI 1.0), not proof')
  const proofs = body.proofs
  if (proofs === undefined) return { credentialConfigurationId, proofs: undefined }
  if (typeof proofs !== 'object' || proofs === null || Array.isArray(proofs))
    throw invalidRequest('proofs must be an object keyed by the proof type')
  // §8.2: "The proofs parameter contains exactly one parameter named as the proof type".
  if (Object.keys(proofs).length > 1) throw invalidRequest('proofs must use exactly one proof type')
  return { credentialConfigurationId, proofs: proofs as Record<string, unknown> }
}
