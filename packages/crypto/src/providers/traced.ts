import { inSpan } from '@credential-service/core-domain/tracing'
import type { KeyProvider } from './provider'

/**
 * The provider with a client span around each call (`vault sign`, `aws-kms describe`), carrying
 * the key's external id: the key name is configuration, not a secret. Tracing off: the calls as
 * they are, after one flag read.
 */
export function tracedKeyProvider(system: 'vault' | 'aws-kms', provider: KeyProvider): KeyProvider {
  const attributes = (keyId: string) => () => ({
    'key_provider.system': system,
    'key_provider.key_id': keyId,
  })
  return {
    describe: (keyId) =>
      inSpan(`${system} describe`, () => provider.describe(keyId), {
        kind: 'client',
        attributes: attributes(keyId),
      }),
    sign: (keyId, alg, data) =>
      inSpan(`${system} sign`, () => provider.sign(keyId, alg, data), {
        kind: 'client',
        attributes: attributes(keyId),
      }),
  }
}
