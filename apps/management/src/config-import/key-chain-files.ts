import type { ValidationIssue } from '@credential-service/core-domain'
import { missingProviderVariables, PROVIDER_VARIABLES } from '@credential-service/server-kit'
import type { ExternalProvider } from '../services/key-chain-material'

/** What an external key chain file names as `externalKeyId`, per provider. */
const EXTERNAL_KEY_IDS: Record<ExternalProvider, string> = {
  vault: 'the Vault transit key name',
  'aws-kms': 'the AWS KMS key id, ARN or alias',
  pkcs11: "the key's CKA_LABEL (or id:<hex> for its CKA_ID)",
  'azure-key-vault': 'the Azure Key Vault key name (or name/version)',
  'gcp-kms': 'the Cloud KMS key version projects/…/locations/…/keyRings/…/cryptoKeys/…/cryptoKeyVersions/N',
}

const isProvider = (value: unknown): value is ExternalProvider =>
  typeof value === 'string' && value in PROVIDER_VARIABLES

const fieldsOf = (json: unknown) =>
  (typeof json === 'object' && json !== null ? json : {}) as {
    source?: unknown
    kmsProvider?: unknown
    externalKeyId?: unknown
  }

/**
 * A key chain file's provider rule before its shape is parsed, so that the message says what is
 * missing: an external key chain names its key in the provider (`externalKeyId`).
 */
export function keyChainFileIssues(json: unknown): ValidationIssue[] {
  const { source, kmsProvider, externalKeyId } = fieldsOf(json)
  if (source !== 'external' || !isProvider(kmsProvider) || externalKeyId !== undefined) return []
  return [
    {
      path: 'externalKeyId',
      message: `an external ${kmsProvider} key chain names its key in externalKeyId: ${EXTERNAL_KEY_IDS[kmsProvider]}`,
    },
  ]
}

/**
 * The variables a key chain file's provider needs (and making its key there: generate, import)
 * that `env` lacks: the import would refuse the chain on a process configured like this one
 * (upgrade:check).
 */
export function keyChainProviderGaps(
  json: unknown,
  env: Record<string, string | undefined>,
): ValidationIssue[] {
  const { source, kmsProvider } = fieldsOf(json)
  if (!isProvider(kmsProvider)) return []
  const making = source === 'generate' ? ' (generating keys)' : source === 'import' ? ' (importing keys)' : ''
  const missing = missingProviderVariables(kmsProvider, making !== '', env)
  if (!missing.length) return []
  return [
    {
      path: 'kmsProvider',
      message: `the ${kmsProvider} provider${making} needs ${missing.join(', ')}, not set on this process`,
    },
  ]
}
