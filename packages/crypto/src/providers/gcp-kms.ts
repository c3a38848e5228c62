import { createHash, createPublicKey } from 'node:crypto'
import { importPKCS8, type JWK, SignJWT } from 'jose'
import { publicPart } from '../keys'
import type { SigningAlgorithm } from '../signer'
import { derToJoseSignature } from './aws-kms'
import { type KeyProvider, KeyProviderError, type ProvidedKey } from './provider'
import { restRequest, tokenCache } from './rest-token'
import { tracedKeyProvider } from './traced'

export interface GcpKmsOptions {
  /** The service account key (the JSON file Google issues): `client_email`, `private_key`, `token_uri`. */
  serviceAccount: { client_email: string; private_key: string; token_uri?: string }
  /** Cloud KMS endpoint (default `https://cloudkms.googleapis.com`; a regional one, or a local one in tests). */
  endpoint?: string | undefined
  /** Where `generate` makes keys: a key ring `projects/P/locations/L/keyRings/R`; absent: keys are registered only. */
  keyRing?: string | undefined
  fetch?: typeof fetch
}

const ALGORITHMS: Record<string, SigningAlgorithm> = {
  EC_SIGN_P256_SHA256: 'ES256',
  EC_SIGN_P384_SHA384: 'ES384',
}
const ALGORITHM_OF: Partial<Record<SigningAlgorithm, string>> = {
  ES256: 'EC_SIGN_P256_SHA256',
  ES384: 'EC_SIGN_P384_SHA384',
}
const KEY_RING = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+$/
/** A crypto key id Cloud KMS takes (`[a-zA-Z0-9_-]{1,63}`) from the service's `tenant/chain/suffix`. */
const cryptoKeyIdOf = (hint: string) => hint.replace(/[^a-zA-Z0-9_-]/g, '-').slice(-63)
/** Tries of a new key's first version while Cloud KMS still generates it (PENDING_GENERATION). */
const PENDING_TRIES = 10
const VERSION_NAME =
  /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+\/cryptoKeyVersions\/[^/]+$/

// CRC32C (Castagnoli, reflected 0x82F63B78): Cloud KMS checks it on what it is sent and sends it
// on what it answers, so a corruption on the way is an error, not a bad signature.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/**
 * Google Cloud KMS asymmetric signing keys over its REST API (no SDK): `GET …/publicKey` and
 * `POST …:asymmetricSign` with the SHA-2 digest and CRC32C checksums both ways, as a service
 * account (an OAuth token from its signed JWT assertion, RFC 7523). `externalKeyId` is the key
 * version's resource name `projects/…/cryptoKeyVersions/N`; a rotation names the next version.
 */
export function createGcpKmsProvider(options: GcpKmsOptions): KeyProvider {
  const doFetch = options.fetch ?? fetch
  const endpoint = (options.endpoint ?? 'https://cloudkms.googleapis.com').replace(/\/+$/, '')
  const tokenUri = options.serviceAccount.token_uri ?? 'https://oauth2.googleapis.com/token'

  const request = restRequest(doFetch)

  const tokens = tokenCache(async () => {
    const now = Math.floor(Date.now() / 1000)
    const assertion = await new SignJWT({ scope: 'https://www.googleapis.com/auth/cloudkms' })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(options.serviceAccount.client_email)
      .setAudience(tokenUri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await importPKCS8(options.serviceAccount.private_key, 'RS256'))
    return request(
      tokenUri,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }),
      },
      `the Google token endpoint ${tokenUri}`,
    )
  }, 'Google')
  const accessToken = tokens.get

  /** A key version's resource name, checked before it goes into a URL. */
  function versionName(keyId: string): string {
    if (
      !VERSION_NAME.test(keyId) ||
      keyId.split('/').some((segment) => segment === '.' || segment === '..')
    ) {
      throw new KeyProviderError(
        `Cloud KMS key '${keyId}': not a key version (projects/…/cryptoKeyVersions/N)`,
        {
          reason: 'not_found',
        },
      )
    }
    return keyId
  }

  async function call<T>(keyId: string, suffix: string, body?: unknown, retried = false): Promise<T> {
    const response = await request(
      `${endpoint}/v1/${keyId}${suffix}`,
      {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${await accessToken()}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      `Cloud KMS ${endpoint}`,
    )
    if (response.status === 401 && !retried) {
      tokens.drop()
      return call(keyId, suffix, body, true)
    }
    const json = (await response.json().catch(() => ({}))) as T & { error?: { status?: string } }
    if (response.ok) return json
    const status = json.error?.status ?? `HTTP ${response.status}`
    const reason =
      response.status === 404
        ? 'not_found'
        : response.status === 429 || response.status >= 500
          ? 'unavailable'
          : response.status === 401 || response.status === 403
            ? 'misconfigured'
            : 'refused'
    throw new KeyProviderError(`Cloud KMS key '${keyId}': ${status}`, { reason })
  }

  const corrupted = (keyId: string) =>
    new KeyProviderError(`Cloud KMS key '${keyId}': CRC32C mismatch (corrupted on the way)`, {
      reason: 'unavailable',
    })

  const provider: KeyProvider = {
    async describe(keyId): Promise<ProvidedKey> {
      const { pem, pemCrc32c, algorithm } = await call<{
        pem?: string
        pemCrc32c?: string
        algorithm?: string
      }>(versionName(keyId), '/publicKey')
      const alg = algorithm ? ALGORITHMS[algorithm] : undefined
      if (!alg || !pem) throw new KeyProviderError(`Cloud KMS key '${keyId}' is not an EC_SIGN_P256/P384 key`)
      if (pemCrc32c !== undefined && Number(pemCrc32c) !== crc32c(Buffer.from(pem))) throw corrupted(keyId)
      return { alg, publicJwk: publicPart(createPublicKey(pem).export({ format: 'jwk' }) as JWK) }
    },

    async sign(keyId, alg, data) {
      if (alg === 'EdDSA') throw new KeyProviderError(`Cloud KMS key '${keyId}': EdDSA is not supported`)
      const hash = alg === 'ES256' ? 'sha256' : 'sha384'
      const digest = createHash(hash).update(data).digest()
      const answer = await call<{
        signature?: string
        signatureCrc32c?: string
        verifiedDigestCrc32c?: boolean
      }>(versionName(keyId), ':asymmetricSign', {
        digest: { [hash]: digest.toString('base64') },
        digestCrc32c: String(crc32c(digest)),
      })
      if (!answer.signature) throw new KeyProviderError(`Cloud KMS key '${keyId}': no signature returned`)
      const der = Buffer.from(answer.signature, 'base64')
      if (answer.verifiedDigestCrc32c !== true || Number(answer.signatureCrc32c) !== crc32c(der)) {
        throw corrupted(keyId)
      }
      return derToJoseSignature(der, alg)
    },

    /**
     * `cryptoKeys.create` in the key ring: an ASYMMETRIC_SIGN key of protection level HSM (Cloud
     * KMS never exports a private key), whose first version Cloud KMS makes with it; answered once
     * that version is generated.
     */
    async generate(keyId, alg): Promise<ProvidedKey> {
      const ring = options.keyRing
      if (!ring || !KEY_RING.test(ring))
        throw new KeyProviderError('Cloud KMS: set GCP_KMS_KEY_RING to generate keys', {
          reason: 'misconfigured',
        })
      const algorithm = ALGORITHM_OF[alg]
      if (!algorithm) throw new KeyProviderError(`Cloud KMS: ${alg} keys are not supported`)
      const cryptoKeyId = cryptoKeyIdOf(keyId)
      const created = await call<{ name?: string }>(
        ring,
        `/cryptoKeys?cryptoKeyId=${encodeURIComponent(cryptoKeyId)}`,
        { purpose: 'ASYMMETRIC_SIGN', versionTemplate: { algorithm, protectionLevel: 'HSM' } },
      )
      const version = versionName(
        `${created.name ?? `${ring}/cryptoKeys/${cryptoKeyId}`}/cryptoKeyVersions/1`,
      )
      for (let attempt = 1; ; attempt++) {
        try {
          return { ...(await provider.describe(version)), externalKeyId: version }
        } catch (error) {
          const pending = error instanceof KeyProviderError && error.message.includes('FAILED_PRECONDITION')
          if (!pending || attempt >= PENDING_TRIES) throw error
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
        }
      }
    },
  }
  return tracedKeyProvider('gcp-kms', provider)
}
