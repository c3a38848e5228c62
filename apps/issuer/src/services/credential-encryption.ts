import {
  type CredentialResponseEncryption,
  exceedsJsonDepth,
  ProtocolError,
} from '@credential-service/core-domain'
import { createCredentialEncryptionKeyRepository } from '@credential-service/db-schema'
import { findUnstorable, type ProtocolDeps } from '@credential-service/server-kit'
import {
  CompactEncrypt,
  calculateJwkThumbprint,
  compactDecrypt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
} from 'jose'
import type { TenantScope } from '../tenant-scope'

/** Key management of encrypted requests and responses (OpenID4VCI 1.0 §10; HAIP §4.2: ECDH-ES). */
export const ENCRYPTION_ALGS = ['ECDH-ES'] as const
export const ENCRYPTION_ENCS = ['A128GCM', 'A256GCM'] as const
export const ENCRYPTION_ZIPS = ['DEF'] as const
/** Checklist S-67: an encrypted request inflates to at most this many bytes (a zip bomb stops here). */
export const MAX_DECOMPRESSED_REQUEST_BYTES = 100_000
/** Response keys we encrypt to: the curves jose's ECDH-ES takes. */
const RESPONSE_KEY_CURVES = ['P-256', 'P-384', 'P-521', 'X25519']

const invalidParameters = (description: string) =>
  new ProtocolError('invalid_encryption_parameters', description)
const invalidRequest = (description: string, cause?: unknown) =>
  new ProtocolError('invalid_credential_request', description, { cause })

/** `credential_response_encryption` of a (deferred) credential request, checked. */
export interface ResponseEncryption {
  jwk: JWK
  alg: (typeof ENCRYPTION_ALGS)[number]
  enc: (typeof ENCRYPTION_ENCS)[number]
  zip: 'DEF' | undefined
}

/** A (deferred) credential request body as read from the wire. */
export interface ReadRequest {
  body: Record<string, unknown>
  /** True when the body arrived as a JWE to the tenant's request encryption key. */
  encrypted: boolean
}

/**
 * The public half of the tenant's request encryption key, as published in the metadata (a JWK
 * Set member: open to any member, as zCredentialIssuerMetadata types it).
 */
export type PublishedEncryptionKey = JWK &
  Record<string, unknown> & { kid: string; use: 'enc'; alg: 'ECDH-ES' }

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The tenant's credential request encryption key: created on first use, private JWK encrypted at rest. */
export function createCredentialEncryption(scope: TenantScope<ProtocolDeps>) {
  const { deps, tenantId } = scope
  const keys = createCredentialEncryptionKeyRepository(deps.db, tenantId)
  const context = (kid: string) => `credential-encryption:${tenantId}/${kid}`

  type DecryptionKey = Awaited<ReturnType<typeof importJWK>>
  // The key of the tenant as last read, with its private half imported: kept while the tenant's
  // cached settings are the same object (a change or a re-created tenant, announced or at most 5 s
  // old, reads it again), so an encrypted request does not read, decrypt and import it each time.
  let cached:
    | { tenant: object; stored: Awaited<ReturnType<typeof read>>; privateKey?: Promise<DecryptionKey> }
    | undefined

  async function key() {
    const tenant = await deps.tenants.tenant(tenantId)
    if (tenant && cached?.tenant === tenant) return cached.stored
    const stored = await read()
    cached = tenant ? { tenant, stored } : undefined
    return stored
  }

  /** The private key of `stored`, imported once per cached read. */
  function privateKey(stored: Awaited<ReturnType<typeof read>>): Promise<DecryptionKey> {
    const decrypt = async () => {
      const jwk = deps.keys.cipher.decrypt<JWK>(stored.privateJwkEncrypted, context(stored.kid))
      return importJWK(jwk, 'ECDH-ES')
    }
    if (cached?.stored !== stored) return decrypt()
    const entry = cached
    // A failed import is not kept: the next request tries again.
    entry.privateKey ??= decrypt().catch((error: unknown) => {
      entry.privateKey = undefined
      throw error
    })
    return entry.privateKey
  }

  async function read() {
    const stored = await keys.get()
    if (stored) return stored
    const pair = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true })
    const publicJwk = await exportJWK(pair.publicKey)
    const kid = await calculateJwkThumbprint(publicJwk)
    return keys.ensure({
      kid,
      publicJwk: { ...publicJwk, kid, use: 'enc', alg: 'ECDH-ES' },
      privateJwkEncrypted: deps.keys.cipher.encrypt(await exportJWK(pair.privateKey), context(kid)),
    })
  }

  return {
    async publicKey(): Promise<PublishedEncryptionKey> {
      return (await key()).publicJwk as unknown as PublishedEncryptionKey
    },

    /**
     * Reads a (deferred) credential request: `application/json`, or `application/jwt` holding a
     * JWE to our key (§10). Any other media type is invalid_credential_request (checklist I-60).
     */
    async readRequest(contentType: string | undefined, body: unknown): Promise<ReadRequest> {
      const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase()
      if (mediaType === 'application/json') {
        // Parsed and checked by the app's guarded JSON parser.
        if (!isObject(body)) throw invalidRequest('the request body must be a JSON object')
        return { body, encrypted: false }
      }
      if (mediaType !== 'application/jwt')
        throw invalidRequest('send the request as application/json, or encrypted as application/jwt')
      if (typeof body !== 'string') throw invalidRequest('the request body must be a compact JWE')
      let header: ReturnType<typeof decodeProtectedHeader>
      try {
        header = decodeProtectedHeader(body.trim())
      } catch (cause) {
        throw invalidRequest('the request body is not a compact JWE', cause)
      }
      const stored = await key()
      if (header.kid !== undefined && header.kid !== stored.kid)
        throw invalidParameters('the request is encrypted to an unknown kid')
      if (!(ENCRYPTION_ALGS as readonly unknown[]).includes(header.alg))
        throw invalidParameters(`request encryption alg must be one of ${ENCRYPTION_ALGS.join(', ')}`)
      if (!(ENCRYPTION_ENCS as readonly unknown[]).includes(header.enc))
        throw invalidParameters(`request encryption enc must be one of ${ENCRYPTION_ENCS.join(', ')}`)
      const decryptionKey = await privateKey(stored)
      let plaintext: Uint8Array
      try {
        const decrypted = await compactDecrypt(body.trim(), decryptionKey, {
          keyManagementAlgorithms: [...ENCRYPTION_ALGS],
          contentEncryptionAlgorithms: [...ENCRYPTION_ENCS],
          maxDecompressedLength: MAX_DECOMPRESSED_REQUEST_BYTES,
        })
        plaintext = decrypted.plaintext
      } catch (cause) {
        throw invalidRequest('the encrypted request could not be decrypted', cause)
      }
      // The same edge checks as a plain JSON body (depth, NUL, lone surrogates), after decryption.
      const text = new TextDecoder().decode(plaintext)
      const json = exceedsJsonDepth(text) ? undefined : parseJson(text)
      if (!isObject(json)) throw invalidRequest('the encrypted request is not a JSON object')
      const unstorable = findUnstorable(json, 'body')
      if (unstorable) throw invalidRequest(`${unstorable.path} ${unstorable.message}`)
      return { body: json, encrypted: true }
    },
  }
}

/**
 * `credential_response_encryption` of a parsed (deferred) credential request (OpenID4VCI 1.0 §8.2,
 * §10), checked against what this issuer supports: each unsupported part is
 * invalid_encryption_parameters (checklist I-71, S-66).
 */
export async function checkResponseEncryption(
  value: CredentialResponseEncryption | undefined,
): Promise<ResponseEncryption | undefined> {
  if (value === undefined) return undefined
  const jwk = value.jwk as JWK & { alg: string }
  if (!(ENCRYPTION_ALGS as readonly string[]).includes(jwk.alg))
    throw invalidParameters(`response encryption alg must be one of ${ENCRYPTION_ALGS.join(', ')}`)
  if (!(ENCRYPTION_ENCS as readonly string[]).includes(value.enc))
    throw invalidParameters(`response encryption enc must be one of ${ENCRYPTION_ENCS.join(', ')}`)
  if (value.zip !== undefined && !(ENCRYPTION_ZIPS as readonly string[]).includes(value.zip))
    throw invalidParameters(`response encryption zip must be one of ${ENCRYPTION_ZIPS.join(', ')}`)
  if (jwk.d !== undefined || !RESPONSE_KEY_CURVES.includes(String(jwk.crv)))
    throw invalidParameters(
      `the response encryption jwk must be a public key on ${RESPONSE_KEY_CURVES.join(', ')}`,
    )
  try {
    await importJWK(jwk, jwk.alg)
  } catch (cause) {
    throw new ProtocolError(
      'invalid_encryption_parameters',
      'the response encryption jwk is not a valid key',
      {
        cause,
      },
    )
  }
  return {
    jwk,
    alg: jwk.alg as ResponseEncryption['alg'],
    enc: value.enc as ResponseEncryption['enc'],
    zip: value.zip as ResponseEncryption['zip'],
  }
}

/**
 * Checklist I-72: response encryption parameters only count inside an encrypted request (else a
 * party in the middle could swap the key); a tenant that requires encryption takes nothing else.
 */
export function checkEncryptionPolicy(options: {
  required: boolean
  request: ReadRequest
  response: ResponseEncryption | undefined
}): void {
  if (options.response && !options.request.encrypted)
    throw invalidParameters('credential_response_encryption needs an encrypted request (application/jwt)')
  if (options.required && !options.request.encrypted)
    throw invalidParameters('this issuer requires encrypted credential requests')
  if (options.required && !options.response)
    throw invalidParameters('this issuer requires credential_response_encryption')
}

/** The answer as a compact JWE to the wallet's key: `alg` from the jwk, its `kid` copied, `zip` only when asked. */
export async function encryptResponse(payload: unknown, encryption: ResponseEncryption): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({
      alg: encryption.alg,
      enc: encryption.enc,
      ...(encryption.jwk.kid ? { kid: encryption.jwk.kid } : {}),
      ...(encryption.zip ? { zip: encryption.zip } : {}),
    })
    .encrypt(await importJWK(encryption.jwk, encryption.alg))
}

/** Issuer metadata entries of §12.2.4 (checklist I-11): both objects, offered together. */
export function encryptionMetadata(key: PublishedEncryptionKey, required: boolean) {
  return {
    credential_response_encryption: {
      alg_values_supported: [...ENCRYPTION_ALGS],
      enc_values_supported: [...ENCRYPTION_ENCS],
      zip_values_supported: [...ENCRYPTION_ZIPS],
      encryption_required: required,
    },
    credential_request_encryption: {
      jwks: { keys: [key] },
      enc_values_supported: [...ENCRYPTION_ENCS],
      zip_values_supported: [...ENCRYPTION_ZIPS],
      encryption_required: required,
    },
  }
}
