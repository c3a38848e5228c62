import { NotFoundError } from '@credential-service/core-domain'
import {
  type ActiveKeyMaterial,
  createAwsKmsProvider,
  createAzureKeyVaultProvider,
  createGcpKmsProvider,
  createJwkCipher,
  createPkcs11Provider,
  createSessionDataCipher,
  createSignerFactory,
  createVaultProvider,
  fingerprintsMatch,
  type GcpKmsOptions,
  type JwkCipher,
  type KeyProvider,
  type KeyProviderCallObserver,
  KeyProviderError,
  type KmsProvider,
  masterSecretFingerprint,
  meteredKeyProviders,
  type SessionDataCipher,
  type Signer,
  type SigningAlgorithm,
  x5cEntry,
} from '@credential-service/crypto'
import {
  createKeyChainRepository,
  type Database,
  externalKeyChains,
  type KeyChainRow,
  recordMasterSecretFingerprint,
} from '@credential-service/db-schema'
import { createLocalJWKSet, type JWTVerifyGetKey } from 'jose'
import type { z } from 'zod'
import { ConfigError, type zCommonEnv } from './env'
import { createTenantMemo } from './tenant-memo'

type KeyConfig = Pick<
  Readonly<z.output<typeof zCommonEnv>>,
  | 'MASTER_SECRET'
  | 'VAULT_ADDR'
  | 'VAULT_TOKEN'
  | 'VAULT_NAMESPACE'
  | 'VAULT_TRANSIT_MOUNT'
  | 'AWS_REGION'
  | 'AWS_ENDPOINT_URL_KMS'
  | 'AZURE_KEY_VAULT_URL'
  | 'AZURE_TENANT_ID'
  | 'AZURE_CLIENT_ID'
  | 'AZURE_CLIENT_SECRET'
  | 'AZURE_AUTHORITY_HOST'
  | 'AZURE_KEY_VAULT_KEY_TYPE'
  | 'GCP_KMS_CREDENTIALS'
  | 'GCP_KMS_ENDPOINT'
  | 'GCP_KMS_KEY_RING'
  | 'PKCS11_MODULE'
  | 'PKCS11_TOKEN_LABEL'
  | 'PKCS11_PIN'
  | 'PKCS11_SESSIONS'
>

type Providers = Partial<Record<Exclude<KmsProvider, 'db'>, KeyProvider>>

export interface KeyRuntimeOptions {
  config: KeyConfig
  db: Database
  /** Replaces the providers built from the configuration (tests pass explicit credentials). */
  providers?: Providers
  /** Reports each provider call's duration and outcome (the process's metrics). */
  observeProviderCall?: KeyProviderCallObserver
  now?: () => Date
}

export interface PublishedJwk extends Record<string, unknown> {
  kid: string
  alg: SigningAlgorithm
  use: 'sig'
  x5c?: string[]
}

/**
 * The variables each external provider needs on a process (providersOf builds it from them), and
 * those it needs besides to make a key there (`source: generate` or `import`). AWS KMS takes the
 * SDK's default credentials and region.
 */
export const PROVIDER_VARIABLES: Record<
  Exclude<KmsProvider, 'db'>,
  { required: readonly string[]; makeKeys?: readonly string[] }
> = {
  vault: { required: ['VAULT_ADDR', 'VAULT_TOKEN'] },
  'aws-kms': { required: [] },
  pkcs11: { required: ['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_PIN'] },
  'azure-key-vault': {
    required: ['AZURE_KEY_VAULT_URL', 'AZURE_TENANT_ID', 'AZURE_CLIENT_ID', 'AZURE_CLIENT_SECRET'],
  },
  'gcp-kms': { required: ['GCP_KMS_CREDENTIALS'], makeKeys: ['GCP_KMS_KEY_RING'] },
}

/** The variables of `kmsProvider` (and of making keys in it: generate, import) that `env` lacks. */
export function missingProviderVariables(
  kmsProvider: Exclude<KmsProvider, 'db'>,
  makeKeys: boolean,
  env: Record<string, string | undefined>,
): string[] {
  const { required, makeKeys: more = [] } = PROVIDER_VARIABLES[kmsProvider]
  return [...required, ...(makeKeys ? more : [])].filter((name) => !env[name])
}

/** The service account key file's fields the token request needs; the error never shows the file. */
function serviceAccountOf(json: string): GcpKmsOptions['serviceAccount'] {
  try {
    const parsed = JSON.parse(json) as Partial<GcpKmsOptions['serviceAccount']>
    if (typeof parsed.client_email === 'string' && typeof parsed.private_key === 'string') {
      return {
        client_email: parsed.client_email,
        private_key: parsed.private_key,
        ...(typeof parsed.token_uri === 'string' ? { token_uri: parsed.token_uri } : {}),
      }
    }
  } catch {
    // Reported below, without the content.
  }
  throw new ConfigError([
    'GCP_KMS_CREDENTIALS: not a service account key (JSON with client_email and private_key)',
  ])
}

/**
 * The external providers the configuration sets up. Vault needs its address and token; AWS KMS
 * takes the SDK's default credentials; PKCS#11 needs module, token and PIN together.
 */
export function providersOf(config: KeyConfig): Providers {
  const pkcs11 = [config.PKCS11_MODULE, config.PKCS11_TOKEN_LABEL, config.PKCS11_PIN]
  if (pkcs11.some(Boolean) && !pkcs11.every(Boolean)) {
    throw new ConfigError([
      'PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN go together: set all three for `pkcs11` key chains, or none',
    ])
  }
  const azure = [
    config.AZURE_KEY_VAULT_URL,
    config.AZURE_TENANT_ID,
    config.AZURE_CLIENT_ID,
    config.AZURE_CLIENT_SECRET,
  ]
  if (azure.some(Boolean) && !azure.every(Boolean)) {
    throw new ConfigError([
      'AZURE_KEY_VAULT_URL, AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET go together: set all four for `azure-key-vault` key chains, or none',
    ])
  }
  return {
    ...(config.GCP_KMS_CREDENTIALS
      ? {
          'gcp-kms': createGcpKmsProvider({
            serviceAccount: serviceAccountOf(config.GCP_KMS_CREDENTIALS),
            endpoint: config.GCP_KMS_ENDPOINT,
            keyRing: config.GCP_KMS_KEY_RING,
          }),
        }
      : {}),
    ...(config.AZURE_KEY_VAULT_URL &&
    config.AZURE_TENANT_ID &&
    config.AZURE_CLIENT_ID &&
    config.AZURE_CLIENT_SECRET
      ? {
          'azure-key-vault': createAzureKeyVaultProvider({
            vaultUrl: config.AZURE_KEY_VAULT_URL,
            tenantId: config.AZURE_TENANT_ID,
            clientId: config.AZURE_CLIENT_ID,
            clientSecret: config.AZURE_CLIENT_SECRET,
            authorityHost: config.AZURE_AUTHORITY_HOST,
            keyType: config.AZURE_KEY_VAULT_KEY_TYPE,
          }),
        }
      : {}),
    ...(config.VAULT_ADDR && config.VAULT_TOKEN
      ? {
          vault: createVaultProvider({
            address: config.VAULT_ADDR,
            token: config.VAULT_TOKEN,
            namespace: config.VAULT_NAMESPACE,
            mount: config.VAULT_TRANSIT_MOUNT,
          }),
        }
      : {}),
    'aws-kms': createAwsKmsProvider({ region: config.AWS_REGION, endpoint: config.AWS_ENDPOINT_URL_KMS }),
    ...(config.PKCS11_MODULE && config.PKCS11_TOKEN_LABEL && config.PKCS11_PIN
      ? {
          pkcs11: createPkcs11Provider({
            module: config.PKCS11_MODULE,
            tokenLabel: config.PKCS11_TOKEN_LABEL,
            pin: config.PKCS11_PIN,
            sessions: config.PKCS11_SESSIONS,
          }),
        }
      : {}),
  }
}

/**
 * Start-up check of the key providers. A configured PKCS#11 token must be there and accept the
 * PIN: otherwise the process stops with a message naming the variables, rather than failing the
 * first wallet. A `pkcs11` key chain whose key is not on the token concerns one tenant, not every
 * one the process serves: it is returned as a warning line, and that chain's wallets get 503s.
 * Without PKCS#11 configured nothing is checked (a database may hold chains for other processes'
 * tokens); Vault and KMS are network services, whose outages are answered per request with 503.
 */
export async function verifyKeyProviders(db: Database, providers: Providers): Promise<string[]> {
  const { pkcs11 } = providers
  if (!pkcs11) return []
  const chains = (await externalKeyChains(db)).filter((chain) => chain.kmsProvider === 'pkcs11')
  const warnings: string[] = []
  try {
    await pkcs11.check?.()
    for (const chain of chains) {
      await pkcs11.describe(chain.externalKeyId as string).catch((error: unknown) => {
        if (!(error instanceof KeyProviderError) || error.reason !== 'not_found') throw error
        warnings.push(`key chain '${chain.tenantId}/${chain.id}': ${error.message}`)
      })
    }
  } catch (error) {
    if (!(error instanceof KeyProviderError)) throw error
    throw new ConfigError([`PKCS11_MODULE / PKCS11_TOKEN_LABEL / PKCS11_PIN: ${error.message}`])
  } finally {
    await pkcs11.close?.()
  }
  return warnings
}

function material(row: KeyChainRow): ActiveKeyMaterial {
  return {
    tenantId: row.tenantId,
    keyChainId: row.id,
    kmsProvider: row.kmsProvider as KmsProvider,
    externalKeyId: row.externalKeyId,
    alg: row.algorithm as SigningAlgorithm,
    kid: row.activeKid,
    encryptedJwk: row.activeJwk,
    x5c: row.activeCertificates.map(x5cEntry),
  }
}

/**
 * Keys as every app needs them: the JWK and session data ciphers, the external providers from the environment,
 * a Signer per tenant key chain, and the tenant's published JWKS.
 */
export function createKeyRuntime(options: KeyRuntimeOptions) {
  const { config, db } = options
  const now = options.now ?? (() => new Date())
  const cipher: JwkCipher = createJwkCipher(config.MASTER_SECRET)
  const sessionData: SessionDataCipher = createSessionDataCipher(config.MASTER_SECRET)
  const configured: Providers = options.providers ?? providersOf(config)
  const providers = options.observeProviderCall
    ? meteredKeyProviders(configured, options.observeProviderCall)
    : configured
  const signerFor = createSignerFactory({ cipher, providers })

  /**
   * A tenant's key chains, read at most every few seconds per process: every token, credential
   * and request object needs them. Rotated-out keys stay published for their grace period, so a
   * token signed just before a rotation still verifies.
   */
  const chains = createTenantMemo((tenantId) => createKeyChainRepository(db, tenantId).all())
  // Derived from one read of the rows, so they are dropped together with it.
  const signers = new WeakMap<KeyChainRow, Signer>()
  const keySets = new WeakMap<KeyChainRow[], Map<string, JWTVerifyGetKey>>()

  function publishedKeys(rows: KeyChainRow[]): { keys: PublishedJwk[] } {
    const at = now()
    const keys: PublishedJwk[] = []
    // The same key may sit in two chains (imported twice): publish each kid once.
    const push = (key: PublishedJwk) => {
      if (!keys.some((existing) => existing.kid === key.kid)) keys.push(key)
    }
    for (const row of rows) {
      const alg = row.algorithm as SigningAlgorithm
      const entry = (jwk: Record<string, unknown>, kid: string, certificates: string[]) => ({
        ...jwk,
        kid,
        alg,
        use: 'sig' as const,
        ...(certificates.length ? { x5c: certificates.map(x5cEntry) } : {}),
      })
      push(entry(row.activePublicJwk, row.activeKid, row.activeCertificates))
      if (row.previousKid && row.previousPublicJwk && row.previousExpiresAt && row.previousExpiresAt > at) {
        push(entry(row.previousPublicJwk, row.previousKid, row.previousCertificates ?? []))
      }
    }
    return { keys }
  }

  return {
    cipher,
    /** Offer claims and presentation results at rest. */
    sessionData,
    providers,

    /** The tenant's key chain rows as last read (certificates for trust decisions). */
    keyChains: (tenantId: string): Promise<KeyChainRow[]> => chains.get(tenantId),

    /** Signer of a tenant's key chain; NotFoundError when the tenant has no such chain. */
    async signer(tenantId: string, keyChainId: string): Promise<Signer> {
      const row = await chains.find(tenantId, (rows) => rows.find((candidate) => candidate.id === keyChainId))
      if (!row) throw new NotFoundError('key chain', keyChainId)
      let signer = signers.get(row)
      if (!signer) {
        signer = signerFor(material(row), row.activePublicJwk)
        signers.set(row, signer)
      }
      return signer
    },

    /**
     * Resolves a JWS header to one of the tenant's published keys (but `except`), for jose's jwtVerify. The
     * imported keys live as long as the cached rows, so a token check imports nothing.
     */
    async verificationKeys(tenantId: string, except?: string): Promise<JWTVerifyGetKey> {
      const rows = await chains.get(tenantId)
      let sets = keySets.get(rows)
      if (!sets) {
        sets = new Map()
        keySets.set(rows, sets)
      }
      let keySet = sets.get(except ?? '')
      if (!keySet) {
        keySet = createLocalJWKSet(publishedKeys(rows.filter((row) => row.id !== except)))
        sets.set(except ?? '', keySet)
      }
      return keySet
    },

    /**
     * One key chain's published keys (active, and the rotated-out one within its grace): the
     * federation entity keys of an entity configuration. Empty when the tenant has no such chain.
     */
    async chainJwks(tenantId: string, keyChainId: string): Promise<{ keys: PublishedJwk[] }> {
      const rows = (await chains.get(tenantId)).filter((row) => row.id === keyChainId)
      return publishedKeys(rows)
    },

    /**
     * Active keys and rotated-out keys still in their grace period, with `x5c` where known;
     * `except` leaves one key chain out (the federation entity key, see `federationKeyChainOf`).
     */
    async jwks(tenantId: string, except?: string): Promise<{ keys: PublishedJwk[] }> {
      return publishedKeys((await chains.get(tenantId)).filter((row) => row.id !== except))
    },
  }
}
export type KeyRuntime = ReturnType<typeof createKeyRuntime>

/**
 * Start-up guard: the database remembers a fingerprint of the MASTER_SECRET it was set up with;
 * a process with another secret stops with a clear message instead of producing undecryptable keys.
 */
export async function verifyMasterSecret(db: Database, masterSecret: string): Promise<void> {
  const expected = masterSecretFingerprint(masterSecret)
  const recorded = await recordMasterSecretFingerprint(db, expected)
  if (!fingerprintsMatch(expected, recorded)) {
    throw new ConfigError([
      'MASTER_SECRET does not match the secret this database was set up with; keys encrypted under the old secret could not be read',
    ])
  }
}
