import { createHash, createPrivateKey, createPublicKey } from 'node:crypto'
import { importPKCS8, type JWK, SignJWT } from 'jose'
import { publicPart } from '../keys'
import type { SigningAlgorithm } from '../signer'
import { derToJoseSignature } from './aws-kms'
import { type ImportMethod, wrapForImport } from './gcp-kms-import'
import { type KeyProvider, KeyProviderError, type ProvidedKey } from './provider'
import { restRequest, tokenCache } from './rest-token'
import { tracedKeyProvider } from './traced'

export interface GcpKmsOptions {
  /** The service account key (the JSON file Google issues): `client_email`, `private_key`, `token_uri`. */
  serviceAccount: { client_email: string; private_key: string; token_uri?: string }
  /** Cloud KMS endpoint (default `https://cloudkms.googleapis.com`; a regional one, or a local one in tests). */
  endpoint?: string | undefined
  /**
   * Where `generate` and `importKey` make keys: a key ring `projects/P/locations/L/keyRings/R`;
   * absent: keys are registered only.
   */
  keyRing?: string | undefined
  /** The import job's wrapping method for `importKey` (default RSA_OAEP_3072_SHA256_AES_256). */
  importMethod?: ImportMethod | undefined
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
/**
 * Reads of a resource Cloud KMS still works on (a version PENDING_GENERATION or PENDING_IMPORT, an
 * import job PENDING_GENERATION), 0.1 s apart at first and then up to 1 s: about 30 s in all.
 */
const PENDING_TRIES = 40
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
 * Keys can be made in a key ring (`cryptoKeys.create`) or imported into one (an import job).
 */
export function createGcpKmsProvider(options: GcpKmsOptions): KeyProvider {
  const doFetch = options.fetch ?? fetch
  const endpoint = (options.endpoint ?? 'https://cloudkms.googleapis.com').replace(/\/+$/, '')
  const tokenUri = options.serviceAccount.token_uri ?? 'https://oauth2.googleapis.com/token'
  const importMethod = options.importMethod ?? 'RSA_OAEP_3072_SHA256_AES_256'

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
      const ring = keyRing('generate')
      const algorithm = algorithmOf(alg)
      const cryptoKeyId = cryptoKeyIdOf(keyId)
      await call(ring, `/cryptoKeys?cryptoKeyId=${encodeURIComponent(cryptoKeyId)}`, {
        purpose: 'ASYMMETRIC_SIGN',
        versionTemplate: { algorithm, protectionLevel: 'HSM' },
      })
      return enabledKey(versionName(`${ring}/cryptoKeys/${cryptoKeyId}/cryptoKeyVersions/1`))
    },

    /**
     * Import through an import job (Google's "Importing a key"): an `importOnly` ASYMMETRIC_SIGN
     * key of protection level HSM made without a version, an HSM import job whose RSA wrapping key
     * Cloud KMS generates, the private key as PKCS#8 DER wrapped for it (gcp-kms-import.ts), and
     * `cryptoKeyVersions:import`; answered once the new version is ENABLED. Cloud KMS never
     * exports it; the wrapped key is the only form that leaves this process.
     */
    async importKey(keyId, privateJwk, alg): Promise<ProvidedKey> {
      const ring = keyRing('import')
      const algorithm = algorithmOf(alg)
      if (privateJwk.crv !== (alg === 'ES256' ? 'P-256' : 'P-384'))
        throw new KeyProviderError(`Cloud KMS: the key is not a ${alg} key`)
      const cryptoKeyId = cryptoKeyIdOf(keyId)
      const cryptoKey = `${ring}/cryptoKeys/${cryptoKeyId}`
      await call(
        ring,
        `/cryptoKeys?cryptoKeyId=${encodeURIComponent(cryptoKeyId)}&skipInitialVersionCreation=true`,
        {
          purpose: 'ASYMMETRIC_SIGN',
          importOnly: true,
          versionTemplate: { algorithm, protectionLevel: 'HSM' },
        },
      )
      const job = await activeImportJob(ring, cryptoKeyId)
      const pkcs8 = createPrivateKey({ key: privateJwk, format: 'jwk' }).export({
        format: 'der',
        type: 'pkcs8',
      })
      let wrappedKey: string
      try {
        wrappedKey = wrapForImport(importMethod, job.pem, pkcs8).toString('base64')
      } finally {
        pkcs8.fill(0)
      }
      const imported = await call<{ name?: string }>(cryptoKey, '/cryptoKeyVersions:import', {
        algorithm,
        importJob: job.name,
        wrappedKey,
      })
      const version = versionName(imported.name ?? '')
      if (!version.startsWith(`${cryptoKey}/`))
        throw new KeyProviderError(`Cloud KMS key '${cryptoKey}': the import answered another key`)
      return enabledKey(version)
    },
  }

  /** The configured key ring, which `generate` and `importKey` need. */
  function keyRing(what: 'generate' | 'import'): string {
    const ring = options.keyRing
    if (!ring || !KEY_RING.test(ring))
      throw new KeyProviderError(`Cloud KMS: set GCP_KMS_KEY_RING to ${what} keys`, {
        reason: 'misconfigured',
      })
    return ring
  }

  function algorithmOf(alg: SigningAlgorithm): string {
    const algorithm = ALGORITHM_OF[alg]
    if (!algorithm) throw new KeyProviderError(`Cloud KMS: ${alg} keys are not supported`)
    return algorithm
  }

  /** Reads `name` (`GET /v1/{name}`) until its `state` is no longer PENDING_something. */
  async function settled<T extends { state?: string }>(name: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const resource = await call<T>(name, '')
      if (!resource.state?.startsWith('PENDING_')) return resource
      if (attempt >= PENDING_TRIES)
        throw new KeyProviderError(`Cloud KMS '${name}': still ${resource.state}`, { reason: 'unavailable' })
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * attempt, 1000)))
    }
  }

  /** A new version once Cloud KMS has generated or imported it; a failed import names Google's reason. */
  async function enabledKey(version: string): Promise<ProvidedKey> {
    const state = await settled<{ state?: string; importFailureReason?: string }>(version)
    if (state.state !== 'ENABLED') {
      const reason = state.importFailureReason ? ` (${state.importFailureReason.slice(0, 300)})` : ''
      throw new KeyProviderError(`Cloud KMS key '${version}': ${state.state ?? 'no state'}${reason}`)
    }
    return { ...(await provider.describe(version)), externalKeyId: version }
  }

  /** `importJobs.create` (HSM, `importMethod`) in the ring, once its wrapping key is generated. */
  async function activeImportJob(ring: string, importJobId: string) {
    const name = `${ring}/importJobs/${importJobId}`
    await call(ring, `/importJobs?importJobId=${encodeURIComponent(importJobId)}`, {
      importMethod,
      protectionLevel: 'HSM',
    })
    const job = await settled<{ state?: string; importMethod?: string; publicKey?: { pem?: string } }>(name)
    if (job.state !== 'ACTIVE' || job.importMethod !== importMethod || !job.publicKey?.pem)
      throw new KeyProviderError(`Cloud KMS import job '${name}': ${job.state ?? 'no state'}`)
    return { name, pem: job.publicKey.pem }
  }

  return tracedKeyProvider('gcp-kms', provider)
}
