import { createHash } from 'node:crypto'
import { base64url, type JWK } from 'jose'
import type { SigningAlgorithm } from '../signer'
import { type KeyProvider, KeyProviderError, type ProvidedKey } from './provider'
import { restRequest, tokenCache } from './rest-token'
import { tracedKeyProvider } from './traced'

export interface AzureKeyVaultOptions {
  /** The vault, e.g. `https://acme-issuer.vault.azure.net`: every key is read from it, no other host. */
  vaultUrl: string
  /** Microsoft Entra tenant, application (client) id and secret of the service principal. */
  tenantId: string
  clientId: string
  clientSecret: string
  /** Token authority (default `https://login.microsoftonline.com`; sovereign clouds, or a local one in tests). */
  authorityHost?: string | undefined
  /** What `generate` makes and `importKey` stores: `EC-HSM` (HSM-protected, a Premium vault; default) or `EC`. */
  keyType?: 'EC-HSM' | 'EC' | undefined
  fetch?: typeof fetch
}

const API_VERSION = '7.4'
const CURVES: Record<string, SigningAlgorithm> = { 'P-256': 'ES256', 'P-384': 'ES384' }
const CURVE_OF: Partial<Record<SigningAlgorithm, string>> = { ES256: 'P-256', ES384: 'P-384' }

/** A key name Key Vault takes (`^[0-9a-zA-Z-]{1,127}$`) from the service's `tenant/chain/suffix`. */
const keyNameOf = (hint: string) => hint.replace(/[^0-9a-zA-Z-]/g, '-').slice(-127)

interface KeyBundle {
  key: JWK & { kid: string; key_ops?: string[] }
  attributes?: { enabled?: boolean }
}

interface AzureError {
  error?: { code?: string; message?: string }
}

/**
 * Azure Key Vault keys over its REST API (no SDK): `GET /keys/{name}/{version}` for the public
 * JWK and `POST /keys/{name}/{version}/sign` with the SHA-2 digest (ES256, ES384; the answer is
 * r‖s already), as the service principal of a client-credentials token for `vault.azure.net`.
 * `externalKeyId` is `name/version`; a bare `name` is the key's current version, which `describe`
 * pins (the answer's `externalKeyId`), so a rotation in the vault never changes the key a chain
 * signs with behind its published JWK. Keys can be made in the vault (Create Key) or imported
 * into it (Import Key).
 */
export function createAzureKeyVaultProvider(options: AzureKeyVaultOptions): KeyProvider {
  const doFetch = options.fetch ?? fetch
  const vault = options.vaultUrl.replace(/\/+$/, '')
  const authority = (options.authorityHost ?? 'https://login.microsoftonline.com').replace(/\/+$/, '')

  const request = restRequest(doFetch)

  const tokens = tokenCache(async () => {
    return request(
      `${authority}/${encodeURIComponent(options.tenantId)}/oauth2/v2.0/token`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: options.clientId,
          client_secret: options.clientSecret,
          scope: 'https://vault.azure.net/.default',
        }),
      },
      `the Azure token authority ${authority}`,
    )
  }, 'Azure')
  const accessToken = tokens.get

  async function call<T>(
    method: string,
    path: string,
    keyId: string,
    body?: unknown,
    retried = false,
  ): Promise<T> {
    const response = await request(
      `${vault}/keys/${path}?api-version=${API_VERSION}`,
      {
        method,
        headers: {
          authorization: `Bearer ${await accessToken()}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      `Azure Key Vault ${vault}`,
    )
    if (response.status === 401 && !retried) {
      tokens.drop()
      return call(method, path, keyId, body, true)
    }
    const json = (await response.json().catch(() => ({}))) as T & AzureError
    if (response.ok) return json
    const code = json.error?.code ?? `HTTP ${response.status}`
    const reason =
      response.status === 404
        ? 'not_found'
        : response.status === 429 || response.status >= 500
          ? 'unavailable'
          : response.status === 401 || response.status === 403
            ? 'misconfigured'
            : 'refused'
    throw new KeyProviderError(`Azure Key Vault key '${keyId}': ${code}`, { reason })
  }

  /** `name` or `name/version`, each one path segment. */
  function keyPath(keyId: string): string {
    const parts = keyId.split('/')
    if (parts.length > 2 || parts.some((part) => !/^[0-9a-zA-Z-]{1,127}$/.test(part))) {
      throw new KeyProviderError(`Azure Key Vault key '${keyId}': not a key name or name/version`, {
        reason: 'not_found',
      })
    }
    return parts.join('/')
  }

  /** The key of a key bundle (Get Key, Create Key, Import Key), pinned to its version. */
  function providedKey(keyId: string, { key, attributes }: KeyBundle): ProvidedKey {
    const alg = key.crv ? CURVES[key.crv] : undefined
    if (!alg || !String(key.kty).startsWith('EC') || !(key.key_ops ?? ['sign']).includes('sign')) {
      throw new KeyProviderError(`Azure Key Vault key '${keyId}' is not a P-256 or P-384 signing key`)
    }
    if (attributes?.enabled === false)
      throw new KeyProviderError(`Azure Key Vault key '${keyId}' is disabled`)
    // kid: https://{vault}/keys/{name}/{version}
    const pinned = new URL(key.kid).pathname.replace(/^\/keys\//, '')
    return { alg, publicJwk: { kty: 'EC', crv: key.crv, x: key.x, y: key.y } as JWK, externalKeyId: pinned }
  }

  return tracedKeyProvider('azure-key-vault', {
    async describe(keyId): Promise<ProvidedKey> {
      return providedKey(keyId, await call<KeyBundle>('GET', keyPath(keyId), keyId))
    },

    /**
     * Create Key (`POST /keys/{name}/create`): an EC key for signing only, made in the vault and not
     * exportable (`exportable: false`; HSM-protected with `EC-HSM`), pinned to its first version.
     */
    async generate(keyId, alg): Promise<ProvidedKey> {
      const crv = CURVE_OF[alg]
      if (!crv) throw new KeyProviderError(`Azure Key Vault: ${alg} keys are not supported`)
      const name = keyNameOf(keyId)
      const bundle = await call<KeyBundle>('POST', `${keyPath(name)}/create`, name, {
        kty: options.keyType ?? 'EC-HSM',
        crv,
        key_ops: ['sign', 'verify'],
        attributes: { enabled: true, exportable: false },
      })
      return providedKey(name, bundle)
    },

    /**
     * Import Key (`PUT /keys/{name}`): the private JWK as an EC signing key, HSM-protected when
     * `keyType` is `EC-HSM` (`Hsm: true`), never exportable; the answer holds the public part only,
     * pinned to the version the import made. Azure's error answer is reported by its code alone,
     * so nothing of the request (the key) reaches a message.
     */
    async importKey(keyId, privateJwk, alg): Promise<ProvidedKey> {
      const crv = CURVE_OF[alg]
      if (!crv || privateJwk.crv !== crv)
        throw new KeyProviderError(`Azure Key Vault: ${alg} keys are not supported`)
      const name = keyNameOf(keyId)
      const { x, y, d } = privateJwk
      const bundle = await call<KeyBundle>('PUT', keyPath(name), name, {
        key: { kty: 'EC', crv, x, y, d, key_ops: ['sign', 'verify'] },
        Hsm: (options.keyType ?? 'EC-HSM') === 'EC-HSM',
        attributes: { enabled: true, exportable: false },
      })
      return providedKey(name, bundle)
    },

    async sign(keyId, alg, data) {
      if (alg === 'EdDSA')
        throw new KeyProviderError(`Azure Key Vault key '${keyId}': EdDSA is not supported`)
      const digest = createHash(alg === 'ES256' ? 'sha256' : 'sha384')
        .update(data)
        .digest()
      // An unpinned name signs with the current version (an empty version segment, as Azure's SDKs send).
      const path = keyPath(keyId)
      const { value } = await call<{ value?: string }>(
        'POST',
        `${path.includes('/') ? path : `${path}/`}/sign`,
        keyId,
        {
          alg,
          value: base64url.encode(digest),
        },
      )
      if (!value) throw new KeyProviderError(`Azure Key Vault key '${keyId}': no signature returned`)
      return base64url.decode(value)
    },

    unpinned: (keyId) => keyId.split('/')[0] as string,
  })
}
