import {
  exceedsJsonDepth,
  MAX_JSON_DEPTH,
  RESPONSE_ENC_VALUES,
  safeParseAuthorizationResponse,
  safeParseEncryptedAuthorizationResponse,
  type VpTokenResponse,
} from '@credential-service/core-domain'
import { PresentationRejected } from '@credential-service/crypto'
import type { PresentationSessionRow } from '@credential-service/db-schema'
import { compactDecrypt, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import { findUnstorable } from '../input-guard'
import type { PresentationDeps } from './deps'

type Form = Record<string, unknown>

/**
 * Whether a response mode has the wallet encrypt its authorization response (a JWE `response`):
 * the modes ending in `.jwt` (OpenID4VP §8.3, `direct_post.jwt`).
 */
export const encryptedResponseMode = (mode: string): boolean => mode.endsWith('.jwt')

/**
 * Reads the authorization response (OpenID4VP §8.2, §8.3): plain form fields or a JWE `response`
 * (also the data of an OpenID4VP answer over the DC API, A.2).
 */
export async function responseParameters(
  deps: PresentationDeps,
  row: PresentationSessionRow,
  form: Form,
): Promise<Form> {
  if (!encryptedResponseMode(row.responseMode)) return form
  const envelope = safeParseEncryptedAuthorizationResponse(form)
  if (!envelope.success) throw new PresentationRejected(envelope.error.detail)
  const jwe = envelope.data.response
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(jwe)
  } catch {
    throw new PresentationRejected('the response is not a JWE')
  }
  if (header.alg !== 'ECDH-ES' || !RESPONSE_ENC_VALUES.includes(String(header.enc))) {
    throw new PresentationRejected(
      `the response JWE uses ${String(header.alg)}/${String(header.enc)}, not ECDH-ES with A128GCM or A256GCM`,
    )
  }
  if (header.kid !== undefined && header.kid !== row.encryptionKid)
    throw new PresentationRejected('the response is encrypted to another key')
  const privateJwk = deps.keys.cipher.decrypt<JWK>(
    row.encryptionKey,
    `presentation:${row.tenantId}/${row.id}`,
  )
  let plaintext: Uint8Array
  try {
    plaintext = (await compactDecrypt(jwe, await importJWK({ ...privateJwk, alg: 'ECDH-ES' }, 'ECDH-ES')))
      .plaintext
  } catch {
    throw new PresentationRejected('the response could not be decrypted with this request’s key')
  }
  const params = parseWalletJson(new TextDecoder().decode(plaintext), 'the decrypted response')
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw new PresentationRejected('the decrypted response is not a JSON object')
  // The edge checks a plain form gets (NUL, lone surrogates), since reasons echo its values.
  const unstorable = findUnstorable(params, 'response')
  if (unstorable) throw new PresentationRejected(`${unstorable.path} ${unstorable.message}`)
  return params as Form
}

/**
 * JSON from the wallet, its depth checked before parsing (checklist S-123): what comes out is
 * walked recursively further on (String(), the disclosure checks), where 5,000 levels overflow
 * the stack.
 */
export function parseWalletJson(text: string, name: string): unknown {
  if (exceedsJsonDepth(text))
    throw new PresentationRejected(`${name} nests deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    return JSON.parse(text)
  } catch {
    throw new PresentationRejected(`${name} is not JSON`)
  }
}

/** A wallet's error response (§8.5) as the session's failure reason. */
const walletError = (response: { error: string; error_description?: string | undefined }) =>
  `wallet error: ${response.error}${response.error_description !== undefined ? ` (${response.error_description})` : ''}`

/**
 * The authorization response of a form or a DC API answer, read (decrypted when the mode asks) and
 * parsed once (core-domain): a malformed one fails the session with the reason and throws its
 * error; a wallet error (§8.5) fails the session and gives undefined, since the wallet gets a normal
 * answer. A PresentationRejected from decryption is the caller's to refuse.
 */
export async function readAuthorizationResponse(
  deps: PresentationDeps,
  row: PresentationSessionRow,
  form: Form,
  fail: (reason: string) => Promise<string>,
): Promise<VpTokenResponse | undefined> {
  const parsed = safeParseAuthorizationResponse(await responseParameters(deps, row, form))
  if (!parsed.success) {
    await fail(parsed.error.detail)
    throw parsed.error
  }
  const response = parsed.data
  if (typeof response.error === 'string') {
    await fail(walletError(response))
    return undefined
  }
  return response as VpTokenResponse
}
