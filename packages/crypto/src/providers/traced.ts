import { inSpan } from '@credential-service/core-domain/tracing'
import { type KeyProvider, KeyProviderError } from './provider'

/** The key stores a span names (`key_provider.system`). */
export type KeyProviderSystem = 'vault' | 'aws-kms' | 'pkcs11' | 'azure-key-vault' | 'gcp-kms'

/** A provider call's outcome: `ok`, a KeyProviderError's reason, or `error` (anything else). */
export type KeyProviderOutcome = 'ok' | KeyProviderError['reason'] | 'error'

export const outcomeOf = (error: unknown): KeyProviderOutcome =>
  error instanceof KeyProviderError ? error.reason : 'error'

/**
 * The provider with a client span around each call (`vault sign`, `aws-kms describe`,
 * `pkcs11 generate`), carrying the key's external id (the key name is configuration, not a
 * secret) and the call's outcome. Tracing off: the calls as they are, after one flag read.
 */
export function tracedKeyProvider(system: KeyProviderSystem, provider: KeyProvider): KeyProvider {
  const span = <T>(operation: string, keyId: string, call: () => Promise<T>) =>
    inSpan(
      `${system} ${operation}`,
      async (active) => {
        try {
          const result = await call()
          active?.setAttribute('key_provider.outcome', 'ok')
          return result
        } catch (error) {
          active?.setAttribute('key_provider.outcome', outcomeOf(error))
          throw error
        }
      },
      {
        kind: 'client',
        attributes: () => ({ 'key_provider.system': system, 'key_provider.key_id': keyId }),
      },
    )
  const { generate, importKey, check, unpinned } = provider
  return {
    describe: (keyId) => span('describe', keyId, () => provider.describe(keyId)),
    sign: (keyId, alg, data) => span('sign', keyId, () => provider.sign(keyId, alg, data)),
    ...(generate ? { generate: (keyId, alg) => span('generate', keyId, () => generate(keyId, alg)) } : {}),
    ...(importKey
      ? { importKey: (keyId, jwk, alg) => span('import', keyId, () => importKey(keyId, jwk, alg)) }
      : {}),
    ...(check ? { check } : {}),
    ...(unpinned ? { unpinned } : {}),
  }
}
