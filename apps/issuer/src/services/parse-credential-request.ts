import { ProtocolError } from '@credential-service/core-domain'

/** A credential request as this issuer reads it (OpenID4VCI 1.0 §8.2). */
export interface CredentialRequest {
  /** Exactly one of the two is set. */
  credentialConfigurationId: string | undefined
  /** From the token response's authorization_details (OpenID4VCI §6.2). */
  credentialIdentifier: string | undefined
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
 * never both, and `proofs` holds a single proof type. Whether the access token allows the one
 * named is the credential endpoint's check.
 */
export function parseCredentialRequest(body: Record<string, unknown>): CredentialRequest {
  if (body.credential_identifier !== undefined && body.credential_configuration_id !== undefined)
    throw invalidRequest('send credential_identifier or credential_configuration_id, not both')
  const credentialIdentifier = body.credential_identifier
  if (credentialIdentifier !== undefined && typeof credentialIdentifier !== 'string')
    throw invalidRequest('credential_identifier must be a string')
  const credentialConfigurationId = body.credential_configuration_id
  if (credentialIdentifier === undefined && typeof credentialConfigurationId !== 'string')
    throw invalidRequest('credential_configuration_id or credential_identifier is required')
  const names = {
    credentialConfigurationId: credentialConfigurationId as string | undefined,
    credentialIdentifier,
  }
  if (body.proof !== undefined) throw invalidRequest('use proofs (OpenID4VCI 1.0), not proof')
  const proofs = body.proofs
  if (proofs === undefined) return { ...names, proofs: undefined }
  if (typeof proofs !== 'object' || proofs === null || Array.isArray(proofs))
    throw invalidRequest('proofs must be an object keyed by the proof type')
  // §8.2: "The proofs parameter contains exactly one parameter named as the proof type".
  if (Object.keys(proofs).length > 1) throw invalidRequest('proofs must use exactly one proof type')
  return { ...names, proofs: proofs as Record<string, unknown> }
}
