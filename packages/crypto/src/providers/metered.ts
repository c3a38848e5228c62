import type { KeyProvider } from './provider'
import { type KeyProviderOutcome, outcomeOf } from './traced'

/** One call of a key provider, as a metric sees it. */
export interface KeyProviderCall {
  /** The provider (`kmsProvider`: `vault`, `aws-kms`, `pkcs11`, `azure-key-vault`, `gcp-kms`). */
  provider: string
  operation: 'describe' | 'sign' | 'generate' | 'import'
  outcome: KeyProviderOutcome
  seconds: number
}

/** Where provider calls are reported (a port: crypto knows no metrics library). */
export type KeyProviderCallObserver = (call: KeyProviderCall) => void

/**
 * The providers with each call's duration and outcome reported to `observe`: two clock reads per
 * call, nothing else on the signing path.
 */
export function meteredKeyProviders<P extends Partial<Record<string, KeyProvider>>>(
  providers: P,
  observe: KeyProviderCallObserver,
): P {
  const metered = (name: string, provider: KeyProvider): KeyProvider => {
    const timed = async <T>(operation: KeyProviderCall['operation'], call: () => Promise<T>): Promise<T> => {
      const started = performance.now()
      let outcome: KeyProviderOutcome = 'ok'
      try {
        return await call()
      } catch (error) {
        outcome = outcomeOf(error)
        throw error
      } finally {
        observe({ provider: name, operation, outcome, seconds: (performance.now() - started) / 1000 })
      }
    }
    const { generate, importKey } = provider
    return {
      ...provider,
      describe: (keyId) => timed('describe', () => provider.describe(keyId)),
      sign: (keyId, alg, data) => timed('sign', () => provider.sign(keyId, alg, data)),
      ...(generate ? { generate: (keyId, alg) => timed('generate', () => generate(keyId, alg)) } : {}),
      ...(importKey
        ? { importKey: (keyId, jwk, alg) => timed('import', () => importKey(keyId, jwk, alg)) }
        : {}),
    }
  }
  return Object.fromEntries(
    Object.entries(providers).map(([name, provider]) => [name, provider && metered(name, provider)]),
  ) as P
}
