import { createHash, createPublicKey } from 'node:crypto'
import { base64url, type JWK } from 'jose'
import { publicPart } from '../keys'
import type { SigningAlgorithm } from '../signer'
import { type KeyProvider, KeyProviderError } from './provider'
import { tracedKeyProvider } from './traced'

export interface VaultOptions {
  /** e.g. `https://vault.internal:8200` */
  address: string
  token: string
  namespace?: string | undefined
  /** Mount path of the transit engine. */
  mount?: string | undefined
  fetch?: typeof fetch
}

const KEY_TYPES: Record<string, SigningAlgorithm> = {
  'ecdsa-p256': 'ES256',
  'ecdsa-p384': 'ES384',
  ed25519: 'EdDSA',
}

interface VaultKey {
  type: string
  latest_version: number
  keys: Record<string, { public_key: string }>
}

/**
 * HashiCorp Vault transit engine: `GET /v1/{mount}/keys/{name}` for the public key, and
 * `POST /v1/{mount}/sign/{name}` with a prehashed digest and JWS signature marshaling.
 */
export function createVaultProvider(options: VaultOptions): KeyProvider {
  const doFetch = options.fetch ?? fetch
  const base = `${options.address.replace(/\/+$/, '')}/v1/${options.mount ?? 'transit'}`
  const headers = {
    'x-vault-token': options.token,
    'content-type': 'application/json',
    ...(options.namespace ? { 'x-vault-namespace': options.namespace } : {}),
  }

  async function call<T>(method: string, path: string, name: string, body?: unknown): Promise<T> {
    let response: Response
    try {
      response = await doFetch(`${base}/${path}/${encodeURIComponent(name)}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      })
    } catch (cause) {
      throw new KeyProviderError(`Vault is unreachable at ${options.address}`, {
        cause,
        reason: 'unavailable',
      })
    }
    const json = (await response.json().catch(() => ({}))) as { data?: T; errors?: string[] }
    if (!response.ok || !json.data) {
      const reason = json.errors?.join('; ') || `HTTP ${response.status}`
      const notFound = response.status === 404 || /not found/i.test(reason)
      throw new KeyProviderError(`Vault transit key '${name}': ${reason}`, {
        reason: notFound ? 'not_found' : 'refused',
      })
    }
    return json.data
  }

  return tracedKeyProvider('vault', {
    async describe(name) {
      const key = await call<VaultKey>('GET', 'keys', name)
      const alg = KEY_TYPES[key.type]
      const latest = key.keys[String(key.latest_version)]
      if (!alg || !latest)
        throw new KeyProviderError(`Vault transit key '${name}' has unsupported type '${key.type}'`)
      const publicJwk =
        alg === 'EdDSA'
          ? ({
              kty: 'OKP',
              crv: 'Ed25519',
              x: base64url.encode(Buffer.from(latest.public_key, 'base64')),
            } as JWK)
          : publicPart(createPublicKey(latest.public_key).export({ format: 'jwk' }) as JWK)
      return { publicJwk, alg }
    },

    async sign(name, alg, data) {
      const body =
        alg === 'EdDSA'
          ? { input: Buffer.from(data).toString('base64') }
          : {
              input: createHash(alg === 'ES256' ? 'sha256' : 'sha384')
                .update(data)
                .digest('base64'),
              prehashed: true,
              hash_algorithm: alg === 'ES256' ? 'sha2-256' : 'sha2-384',
              marshaling_algorithm: 'jws',
            }
      const { signature } = await call<{ signature: string }>('POST', 'sign', name, body)
      // "vault:v<version>:<signature>": base64url r‖s with jws marshaling, base64 for ed25519.
      const encoded = signature.split(':')[2]
      if (!encoded) throw new KeyProviderError(`Vault transit key '${name}': malformed signature`)
      return alg === 'EdDSA' ? new Uint8Array(Buffer.from(encoded, 'base64')) : base64url.decode(encoded)
    },
  })
}
