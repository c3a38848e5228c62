import { z } from 'zod'

const zStrings = z.array(z.string())

/** A display entry (OpenID4VCI 1.0 §12.2.4): a name per locale; logos and colours may follow. */
const zDisplay = z.looseObject({ name: z.string().optional(), locale: z.string().optional() })

/** One proof type a configuration takes (§12.2.4 `proof_types_supported`, Appendix F). */
export const zProofTypeSupported = z
  .object({
    proof_signing_alg_values_supported: zStrings,
    /** Appendix D: the key storage and user authentication levels a key attestation must show. */
    key_attestations_required: z
      .object({ key_storage: zStrings.optional(), user_authentication: zStrings.optional() })
      .loose()
      .optional(),
  })
  .loose()

/**
 * One entry of `credential_configurations_supported` (OpenID4VCI 1.0 §12.2.4, Appendix A): the
 * format and its own parameters (`vct`, `doctype`, …), the scope that requests it, the signing
 * algorithms (JOSE names, or COSE ids for mdoc), holder binding, and the claims to display.
 */
export const zCredentialConfigurationSupported = z
  .object({
    format: z.string(),
    scope: z.string().optional(),
    credential_signing_alg_values_supported: z.array(z.union([z.string(), z.number()])).optional(),
    cryptographic_binding_methods_supported: zStrings.optional(),
    proof_types_supported: z.record(z.string(), zProofTypeSupported).optional(),
    credential_metadata: z
      .object({
        display: z.array(zDisplay).optional(),
        claims: z
          .array(
            z
              .object({
                path: z.array(z.union([z.string(), z.number(), z.null()])).min(1),
                mandatory: z.boolean().optional(),
                display: z.array(zDisplay).optional(),
              })
              .loose(),
          )
          .optional(),
      })
      .loose()
      .optional(),
  })
  .loose()
export type CredentialConfigurationSupported = z.infer<typeof zCredentialConfigurationSupported>

const zJwkSet = z.object({ keys: z.array(z.looseObject({})) })

/**
 * Credential issuer metadata (OpenID4VCI 1.0 §12.2.4), as served at
 * `/.well-known/openid-credential-issuer` (unsigned, or as the claims of signed metadata, §12.2.3).
 */
export const zCredentialIssuerMetadata = z
  .object({
    credential_issuer: z.url(),
    /** Absent: the issuer is its own authorization server. */
    authorization_servers: z.array(z.url()).optional(),
    credential_endpoint: z.url(),
    nonce_endpoint: z.url().optional(),
    deferred_credential_endpoint: z.url().optional(),
    notification_endpoint: z.url().optional(),
    /** §10: the key a wallet encrypts its credential requests to. */
    credential_request_encryption: z
      .object({
        jwks: zJwkSet,
        enc_values_supported: zStrings,
        zip_values_supported: zStrings.optional(),
        encryption_required: z.boolean(),
      })
      .loose()
      .optional(),
    /** §10: how the issuer can encrypt its answers to the wallet's key. */
    credential_response_encryption: z
      .object({
        alg_values_supported: zStrings,
        enc_values_supported: zStrings,
        zip_values_supported: zStrings.optional(),
        encryption_required: z.boolean(),
      })
      .loose()
      .optional(),
    batch_credential_issuance: z
      .object({ batch_size: z.int().min(2) })
      .loose()
      .optional(),
    display: z.array(zDisplay).optional(),
    credential_configurations_supported: z.record(z.string(), zCredentialConfigurationSupported),
  })
  .loose()
export type CredentialIssuerMetadata = z.infer<typeof zCredentialIssuerMetadata>
