import {
  type AuthorizationServerMetadata,
  type CredentialConfig,
  type CredentialConfigurationSupported,
  type CredentialIssuerMetadata,
  claimPath,
  type FieldDisplay,
  formatSpec,
  IA_ENDPOINT_PATH,
  IA_METADATA_PARAMETER,
  IAE_ENDPOINT_PATH,
  IAE_METADATA_PARAMETER,
  IAE_REQUIRED_METADATA_PARAMETER,
  type IssuerDisplay,
} from '@credential-service/core-domain'
import { ATTESTATION_ALGORITHMS } from './attestation-trust'
import { encryptionMetadata, type PublishedEncryptionKey } from './credential-encryption'
import { DPOP_ALGORITHMS } from './dpop'

/**
 * Proof algorithms we advertise: fully specified JOSE names (RFC 9864 §2.2: `Ed25519`, not the
 * polymorphic `EdDSA`; `ES256` and `ES384` already name their curve).
 */
export const PROOF_ALGORITHMS = ['ES256', 'ES384', 'Ed25519'] as const
/** Proof algorithms we accept: the advertised ones, and `EdDSA` from wallets that predate RFC 9864. */
export const ACCEPTED_PROOF_ALGORITHMS = [...PROOF_ALGORITHMS, 'EdDSA'] as const

type ProofTypeSupported = NonNullable<CredentialConfigurationSupported['proof_types_supported']>[string]

const displayOf = (entry: FieldDisplay) =>
  'locale' in entry ? { name: entry.name, locale: entry.locale } : { name: entry.label, locale: entry.lang }

/** One entry of `credential_configurations_supported` (OpenID4VCI §12.2.4, Appendix A). */
export function configurationMetadata(
  config: CredentialConfig,
  signingAlg: string,
): CredentialConfigurationSupported {
  // The format's own members (Appendix A): its type and its signing algorithm identifiers.
  const format = formatSpec(config.config.format)
  return {
    format: config.config.format,
    ...format.typeMetadata(config.config),
    scope: config.config.scope ?? config.id,
    credential_signing_alg_values_supported: format.signingAlgValues(signingAlg),
    ...(config.keyBinding
      ? {
          cryptographic_binding_methods_supported: [format.bindingMethod],
          proof_types_supported: proofTypesSupported(config),
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

/**
 * `proof_types_supported` (OpenID4VCI 1.0 §12.2.4, Appendix F): `key_attestations_required` only
 * when the configuration requires key attestations (checklist I-09), and the `attestation` proof
 * type whenever it has a key attestation policy.
 */
function proofTypesSupported(
  config: CredentialConfig,
): CredentialConfigurationSupported['proof_types_supported'] {
  const policy = config.keyAttestation
  const jwt: ProofTypeSupported = { proof_signing_alg_values_supported: [...PROOF_ALGORITHMS] }
  if (!policy) return { jwt }
  const required = {
    ...(policy.keyStorage ? { key_storage: policy.keyStorage } : {}),
    ...(policy.userAuthentication ? { user_authentication: policy.userAuthentication } : {}),
  }
  if (policy.required) jwt.key_attestations_required = required
  return {
    jwt,
    attestation: {
      proof_signing_alg_values_supported: [...ATTESTATION_ALGORITHMS],
      key_attestations_required: required,
    },
  }
}

export interface IssuerMetadataInput {
  issuer: string
  tenantName: string
  /** The tenant's issuer display entries; null or empty: its name alone. */
  issuerDisplay?: readonly IssuerDisplay[] | null
  configs: { config: CredentialConfig; signingAlg: string }[]
  /** Issuer identifiers of the tenant's external authorization servers; empty: none. */
  authorizationServers?: string[]
  /** The tenant's request encryption key and whether encryption is required (OpenID4VCI §10). */
  encryption: { key: PublishedEncryptionKey; required: boolean }
}

/**
 * `batch_credential_issuance.batch_size` (OpenID4VCI 1.0 §12.2.4): one limit for the whole issuer,
 * which a wallet may use with any configuration (§8.2), while each configuration enforces its own
 * `batchSize`. So it is the smallest `batchSize` of the configurations that take proofs (the others
 * issue one credential per request whatever the metadata says); undefined, and no batch issuance
 * advertised, when that is below 2 (checklist I-12).
 */
export function advertisedBatchSize(configs: Pick<CredentialConfig, 'keyBinding' | 'batchSize'>[]) {
  const sizes = configs.filter((config) => config.keyBinding).map((config) => config.batchSize)
  const smallest = Math.min(...sizes)
  return sizes.length && smallest >= 2 ? smallest : undefined
}

/**
 * Credential issuer metadata (OpenID4VCI §12.2). The issuer is its own authorization server; with
 * external ones, `authorization_servers` lists it first (its pre-authorized code grant goes on),
 * then theirs (§12.2.4: omitted, the issuer alone is meant).
 */
export function issuerMetadata(input: IssuerMetadataInput): CredentialIssuerMetadata {
  const batch = advertisedBatchSize(input.configs.map(({ config }) => config))
  const external = input.authorizationServers ?? []
  return {
    credential_issuer: input.issuer,
    ...(external.length ? { authorization_servers: [input.issuer, ...external] } : {}),
    credential_endpoint: `${input.issuer}/credential`,
    deferred_credential_endpoint: `${input.issuer}/deferred-credential`,
    nonce_endpoint: `${input.issuer}/nonce`,
    // §12.2.4: without it a wallet has nowhere to send the §11 notification, and (oid4vc-ts) refuses to.
    notification_endpoint: `${input.issuer}/notification`,
    // §12.2.4 `display`: the tenant's entries per locale (name, logo), else its name.
    display: input.issuerDisplay?.length ? [...input.issuerDisplay] : [{ name: input.tenantName }],
    ...(batch ? { batch_credential_issuance: { batch_size: batch } } : {}),
    ...encryptionMetadata(input.encryption.key, input.encryption.required),
    credential_configurations_supported: Object.fromEntries(
      input.configs.map(({ config, signingAlg }) => [config.id, configurationMetadata(config, signingAlg)]),
    ),
  }
}

/**
 * RFC 8414 metadata of the tenant's authorization server (checklist I-14): the pre-authorized
 * code grant and the authorization code flow with PAR and PKCE (OpenID4VCI §5, HAIP 4). A wallet
 * may come without client authentication (`none`, anonymous pre-authorized code) only while some
 * configuration does not require a wallet attestation.
 */
export function authorizationServerMetadata(
  issuer: string,
  configs: Pick<CredentialConfig, 'walletAttestation'>[],
): AuthorizationServerMetadata {
  const anonymous = configs.some((config) => config.walletAttestation !== 'required')
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    pushed_authorization_request_endpoint: `${issuer}/par`,
    require_pushed_authorization_requests: true,
    // OpenID4VCI 1.1 §"Interactive Authorization" (FiPA -03 §4.1).
    [IA_METADATA_PARAMETER]: `${issuer}/${IA_ENDPOINT_PATH}`,
    // The earlier IAE form on the same sessions (issue 37). Not required: PAR and /authorize serve too.
    [IAE_METADATA_PARAMETER]: `${issuer}/${IAE_ENDPOINT_PATH}`,
    [IAE_REQUIRED_METADATA_PARAMETER]: false,
    // ABCA (-10) §8: fresh challenges for wallet attestation PoPs.
    challenge_endpoint: `${issuer}/challenge`,
    jwks_uri: `${issuer}/jwks`,
    grant_types_supported: [
      'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      'authorization_code',
      'refresh_token',
    ],
    'pre-authorized_grant_anonymous_access_supported': anonymous,
    token_endpoint_auth_methods_supported: anonymous
      ? ['none', 'attest_jwt_client_auth']
      : ['attest_jwt_client_auth'],
    client_attestation_signing_alg_values_supported: [...ATTESTATION_ALGORITHMS],
    client_attestation_pop_signing_alg_values_supported: [...ATTESTATION_ALGORITHMS],
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    authorization_details_types_supported: ['openid_credential'],
  }
}
