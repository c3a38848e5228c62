import { z } from 'zod'
import { ProtocolError } from '../errors'
import { leadingIssue } from './parse-issue'

const NEEDS_JWK = 'credential_response_encryption needs a jwk object'

/**
 * `credential_response_encryption` (OpenID4VCI 1.0 §8.2, §10): the wallet's public key, with the
 * `alg` to encrypt the answer to it, `enc` and, optionally, `zip`. Which values are supported is
 * the issuer's check; a malformed value is invalid_encryption_parameters (§8.3.1.2).
 */
export const zCredentialResponseEncryption = z
  .object(
    {
      jwk: z.looseObject(
        { alg: z.string({ error: 'the response encryption jwk needs an alg' }) },
        { error: NEEDS_JWK },
      ),
      enc: z.string({ error: 'credential_response_encryption needs an enc' }),
      zip: z.string({ error: 'credential_response_encryption zip must be a string' }).optional(),
    },
    { error: NEEDS_JWK },
  )
  .loose()
export type CredentialResponseEncryption = z.infer<typeof zCredentialResponseEncryption>

const JWT_PROOFS = 'proofs.jwt must be a non-empty array of JWTs'
const ONE_ATTESTATION = 'proofs.attestation must hold exactly one key attestation'

/** `proofs.jwt` (OpenID4VCI 1.0 §8.2.1.1, Appendix F.1): one proof JWT per holder key. */
export const zJwtProofs = z
  .array(z.string({ error: JWT_PROOFS }), { error: JWT_PROOFS })
  .min(1, { error: JWT_PROOFS })

/** `proofs.attestation` (Appendix F.3): exactly one key attestation, itself verified by the issuer. */
export const zAttestationProofs = z
  .array(z.unknown(), { error: ONE_ATTESTATION })
  .length(1, { error: ONE_ATTESTATION })

/** The proof types this issuer takes, one schema each (§8.2: `proofs` is keyed by the proof type). */
export const proofTypeSchemas = { jwt: zJwtProofs, attestation: zAttestationProofs }
export type ProofType = keyof typeof proofTypeSchemas
/** The one proof type of a request and its proofs, parsed by that type's schema. */
export type ParsedProofs = {
  [T in ProofType]: { type: T; proofs: z.infer<(typeof proofTypeSchemas)[T]> }
}[ProofType]

/**
 * The proofs of a credential request by their type's schema: `attestation` when it is there, else
 * `jwt` (absent proofs, or a type not taken here, fail as jwt proofs do). A malformed one is
 * invalid_proof (§8.3.1.2); the envelope (an object with one proof type) is zCredentialRequest's.
 * Checked where the configuration takes proofs, so that one without key binding ignores them.
 */
export function parseProofs(proofs: Record<string, unknown> | undefined): ParsedProofs {
  const type: ProofType = proofs?.attestation !== undefined ? 'attestation' : 'jwt'
  const parsed = proofTypeSchemas[type].safeParse(proofs?.[type])
  if (!parsed.success)
    throw new ProtocolError('invalid_proof', parsed.error.issues[0]?.message ?? `malformed proofs.${type}`)
  return { type, proofs: parsed.data } as ParsedProofs
}

const NOT_BOTH = 'send credential_identifier or credential_configuration_id, not both'
const REQUIRED = 'credential_configuration_id or credential_identifier is required'

/**
 * A credential request (OpenID4VCI 1.0 §8.2; checklist S-27, S-28): it names the credential
 * either by `credential_identifier` (§6.2, from the token's authorization_details) or by
 * `credential_configuration_id`, never both; `proofs` holds exactly one proof type, whose content
 * parseProofs checks with that type's schema; draft `proof` is gone. Extensions pass through.
 */
export const zCredentialRequest = z
  .object({
    credential_response_encryption: zCredentialResponseEncryption.optional(),
    credential_identifier: z.string({ error: 'credential_identifier must be a string' }).optional(),
    credential_configuration_id: z.string({ error: REQUIRED }).optional(),
    proof: z.never({ error: 'use proofs (OpenID4VCI 1.0), not proof' }).optional(),
    proofs: z
      .record(z.string(), z.unknown(), { error: 'proofs must be an object keyed by the proof type' })
      // §8.2: "The proofs parameter contains exactly one parameter named as the proof type".
      .refine((proofs) => Object.keys(proofs).length <= 1, {
        error: 'proofs must use exactly one proof type',
      })
      .optional(),
  })
  .loose()
  .superRefine(
    (request, context) => {
      // Run on the raw values too (`when`): naming both, or neither, is the issue to report first.
      const raw = request as Record<string, unknown>
      if (raw.credential_identifier !== undefined && raw.credential_configuration_id !== undefined)
        context.addIssue({ code: 'custom', message: NOT_BOTH, path: [] })
      else if (raw.credential_identifier === undefined && raw.credential_configuration_id === undefined)
        context.addIssue({ code: 'custom', message: REQUIRED, path: [] })
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  )
export type CredentialRequest = z.infer<typeof zCredentialRequest>

/**
 * Parses `body` against `schema` (§8.3.1.2): a malformed credential_response_encryption is
 * invalid_encryption_parameters and comes first, anything else invalid_credential_request
 * (never invalid_request at these endpoints, checklist I-60).
 */
export function parseCredentialEndpointRequest<T extends z.ZodType>(
  schema: T,
  body: Record<string, unknown>,
): z.infer<T> {
  const parsed = schema.safeParse(body)
  if (parsed.success) return parsed.data
  // Then an issue of the whole request (naming both or neither), as the endpoint always answered.
  const issue = leadingIssue(parsed.error, ['credential_response_encryption', ''])
  const description = issue?.message ?? 'malformed credential request'
  if (issue?.path[0] === 'credential_response_encryption')
    throw new ProtocolError('invalid_encryption_parameters', description)
  throw new ProtocolError('invalid_credential_request', description)
}

/** The credential request of `body`, or the refusal of §8.3.1.2 naming the first problem. */
export const parseCredentialRequest = (body: Record<string, unknown>): CredentialRequest =>
  parseCredentialEndpointRequest(zCredentialRequest, body)
