import { inflateSync } from 'node:zlib'
import { decodeJwt } from 'jose'
import type { Signer } from './signer'
import { signJws } from './signer'

// Loaded with the first list token signed: only the issuer signs them (readers use statusInList).
let library: Promise<typeof import('@sd-jwt/jwt-status-list')> | undefined
const loadLibrary = () => (library ??= import('@sd-jwt/jwt-status-list'))

export interface SignStatusListTokenOptions {
  signer: Signer
  /** The list's URI: `sub` of the token, equal to the `uri` in the credentials (TSL §5.1). */
  uri: string
  bits: 1 | 2 | 4 | 8
  size: number
  /** The entries that are not VALID (0); every other index is VALID. */
  entries: readonly { idx: number; status: number }[]
  issuedAt: Date
  expiresAt: Date
  /** Seconds a relying party may cache the token before fetching it again (TSL §5.1 `ttl`). */
  ttlSeconds: number
}

/**
 * A Status List Token as JWT (draft-ietf-oauth-status-list §5.1, checklist F-30, F-31): `typ`
 * statuslist+jwt, `x5c` of the key chain, `sub` the list URI, `iat`, `exp`, `ttl` and
 * `status_list` {bits, lst}; `lst` is packed and DEFLATE-compressed by @sd-jwt/jwt-status-list.
 */
export async function signStatusListToken(options: SignStatusListTokenOptions): Promise<string> {
  const { StatusList, createHeaderAndPayload } = await loadLibrary()
  const statuses = new Array<number>(options.size).fill(0)
  for (const { idx, status } of options.entries) statuses[idx] = status
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
  const { signer } = options
  const { header, payload } = createHeaderAndPayload(
    new StatusList(statuses, options.bits),
    {
      sub: options.uri,
      iat: seconds(options.issuedAt),
      exp: seconds(options.expiresAt),
      ttl: options.ttlSeconds,
    },
    {
      alg: signer.alg,
      typ: 'statuslist+jwt',
      kid: signer.kid,
      ...(signer.x5c.length ? { x5c: signer.x5c } : {}),
    },
  )
  return signJws(signer, header, payload)
}

/**
 * Largest byte array a relying party inflates from `lst` (TSL §11.1, checklist S-124, F-33): 16 MiB
 * holds 2^27 one-bit entries, far beyond real lists (ours are 32 KiB), while a 256 KiB zlib bomb
 * stops here instead of filling the memory.
 */
export const MAX_STATUS_LIST_BYTES = 16 * 1024 * 1024

/** A Token Status List entry (TSL §6.2, §6.3): the list's URI and the credential's index in it. */
export interface StatusListEntry {
  idx: number
  uri: string
}

/** A status list token that cannot answer for an index: the status is undetermined. */
export class StatusListError extends Error {}

const BITS = [1, 2, 4, 8]

/** A Status List Token's list, inflated once (TSL §4.1): `bits` per entry, LSB-first in `bytes`. */
export interface StatusList {
  bits: number
  bytes: Buffer
}

/**
 * The list of a Status List Token whose signature the caller has verified (TSL §8.3): `lst` is
 * inflated with node:zlib up to MAX_STATUS_LIST_BYTES, never unpacked into one number per entry.
 * A malformed list or one past the cap throws StatusListError.
 */
export function readStatusList(token: string): StatusList {
  let claims: ReturnType<typeof decodeJwt>
  try {
    claims = decodeJwt(token)
  } catch {
    throw new StatusListError('is not a JWT')
  }
  const list = claims.status_list as { bits?: unknown; lst?: unknown } | undefined
  if (typeof list !== 'object' || list === null) throw new StatusListError('has no status_list claim')
  const lst = typeof list.lst === 'string' ? Buffer.from(list.lst, 'base64url') : new Uint8Array()
  return inflateStatusList(list.bits, lst)
}

/**
 * `bits` and the compressed `lst` of a status list, JWT or CWT form alike (TSL §4.2, §4.3),
 * inflated with node:zlib up to MAX_STATUS_LIST_BYTES; anything else throws StatusListError.
 */
export function inflateStatusList(bits: unknown, lst: Uint8Array): StatusList {
  if (typeof bits !== 'number' || !BITS.includes(bits))
    throw new StatusListError('has bits other than 1, 2, 4 or 8')
  if (lst.length === 0) throw new StatusListError('has no lst')
  try {
    return { bits, bytes: inflateSync(lst, { maxOutputLength: MAX_STATUS_LIST_BYTES }) }
  } catch (error) {
    throw new StatusListError(
      (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
        ? `inflates beyond ${MAX_STATUS_LIST_BYTES} bytes`
        : 'has an lst that is not ZLIB-compressed',
    )
  }
}

/**
 * The status at `idx` (checklist F-33): 0 VALID, 1 INVALID, 2 SUSPENDED, … read from the bytes
 * where it sits (LSB-first, TSL §4.1). An index past the end throws StatusListError.
 */
export function statusAt(list: StatusList, idx: number): number {
  const { bits, bytes } = list
  if (!Number.isSafeInteger(idx) || idx < 0 || idx >= (bytes.length * 8) / bits)
    throw new StatusListError(`has no entry at index ${idx}`)
  const bit = idx * bits
  return ((bytes[bit >> 3] as number) >> (bit & 7)) & ((1 << bits) - 1)
}

/** The status at `idx` of a Status List Token whose signature the caller has verified. */
export function statusInList(token: string, idx: number): number {
  return statusAt(readStatusList(token), idx)
}
