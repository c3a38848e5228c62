import { type CredentialConfig, claimPath, type FieldDisplay } from '@credential-service/core-domain'

/**
 * Proof algorithms we advertise: fully specified JOSE names (RFC 9864 §2.2: `Ed25519`, not the
 * polymorphic `EdDSA`; `ES256` and `ES384` already name their curve).
 */
export const PROOF_ALGORITHMS = ['ES256', 'ES384', 'Ed25519'] as const
/** Proof algorithms we accept: the advertised ones, and `EdDSA` from wallets that predate RFC 9864. */
export const ACCEPTED_PROOF_ALGORITHMS = [...PROOF_ALGORITHMS, 'EdDSA'] as const

/**
 * `credential_signing_alg_values_supported` of an mdoc per key algorithm (OpenID4VCI 1.0 App. A.2.2,
 * checklist I-08): the IssuerAuth header's COSE id for ECDSA (-7, -35: what HAIP and ISO 18013-5
 * wallets match literally) and the fully specified id that the header and key curve amount to
 * (RFC 9864: ESP256 -9, ESP384 -51, Ed25519 -19). EdDSA's own id -8 is polymorphic and deprecated.
 */
const MDOC_SIGNING_ALGS: Record<string, number[]> = { ES256: [-7, -9], ES384: [-35, -51], EdDSA: [-19] }

const displayOf = (entry: FieldDisplay) =>
  'locale' in entry ? { name: entry.name, locale: entry.locale } : { name: entry.label, locale: entry.lang }

/** One entry of `credential_configurations_supported` (OpenID4VCI §12.2.4, Appendix A). */
export function configurationMetadata(config: CredentialConfig, signingAlg: string): Record<string, unknown> {
  const mdoc = config.config.format === 'mso_mdoc'
  return {
    format: config.config.format,
    ...(mdoc ? { doctype: config.config.docType } : { vct: config.config.vct }),
    scope: config.config.scope ?? config.id,
    credential_signing_alg_values_supported: mdoc
      ? (MDOC_SIGNING_ALGS[signingAlg] ?? [-7, -9])
      : [signingAlg],
    ...(config.keyBinding
      ? {
          cryptographic_binding_methods_supported: [mdoc ? 'cose_key' : 'jwk'],
          proof_types_supported: { jwt: { proof_signing_alg_values_supported: [...PROOF_ALGORITHMS] } },
        }
      : {}),
    credential_metadata: {
      ...(config.config.display ? { display: config.config.display } : {}),
      claims: config.fields.map((field) => ({
        path: claimPath(field),
        ...(field.mandatory ? { mandatory: true } : {}),
        ...(field.display?.length ? { display: field.display.map(displayOf) } : {}),
      })),
    },
  }
}

export interface IssuerMetadataInput {
  issuer: string
  tenantName: string
  configs: { config: CredentialConfig; signingAlg: string }[]
}

/** Credential issuer metadata (OpenID4VCI §12.2). The issuer is its own authorization server. */
export function issuerMetadata(input: IssuerMetadataInput): Record<string, unknown> {
  const batch = Math.max(1, ...input.configs.map(({ config }) => config.batchSize))
  return {
    credential_issuer: input.issuer,
    credential_endpoint: `${input.issuer}/credential`,
    nonce_endpoint: `${input.issuer}/nonce`,
    // §12.2.4: without it a wallet has nowhere to send the §11 notification, and (oid4vc-ts) refuses to.
    notification_endpoint: `${input.issuer}/notification`,
    display: [{ name: input.tenantName }],
    ...(batch >= 2 ? { batch_credential_issuance: { batch_size: batch } } : {}),
    credential_configurations_supported: Object.fromEntries(
      input.configs.map(({ config, signingAlg }) => [config.id, configurationMetadata(config, signingAlg)]),
    ),
  }
}

/** RFC 8414 metadata of the tenant's authorization server (pre-authorized code only, for now). */
export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    grant_types_supported: ['urn:ietf:params:oauth:grant-type:pre-authorized_code'],
    'pre-authorized_grant_anonymous_access_supported': true,
    token_endpoint_auth_methods_supported: ['none'],
    response_types_supported: [],
  }
}
