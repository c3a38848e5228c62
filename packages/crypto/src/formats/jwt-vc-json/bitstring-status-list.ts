import { gunzipSync, gzipSync } from 'node:zlib'
import {
  BITSTRING_PURPOSES,
  type BitstringPurpose,
  bitstringStatusListUri,
} from '@credential-service/core-domain'
import { base64url } from 'jose'
import { PresentationRejected } from '../../presentation'
import type { Signer } from '../../signer'
import { MAX_STATUS_LIST_BYTES, type StatusList, StatusListError } from '../../status-list-token'
import { issueVcJwt } from './issue'

/** Bitstring Status List §3.1: "Let |minimumNumberOfEntries| be 131,072". */
export const MIN_BITSTRING_ENTRIES = 131_072

/** A credential's BitstringStatusListEntry (Bitstring Status List §2.1), as the verifier checks it. */
export interface BitstringEntry {
  idx: number
  uri: string
  purpose: string
}

/** The bit of `idx`: Bitstring §2.2 puts index 0 at "the left-most bit", the high bit of byte 0. */
const bitOf = (idx: number) => ({ byte: idx >> 3, mask: 0x80 >> (idx & 7) })

/**
 * `encodedList` (Bitstring Status List §2.2): "a Multibase-encoded base64url (with no padding)
 * representation of the GZIP-compressed bitstring", `size` bits with `set` at 1.
 */
export function encodeBitstring(size: number, set: Iterable<number>): string {
  const bytes = new Uint8Array(Math.ceil(Math.max(size, MIN_BITSTRING_ENTRIES) / 8))
  for (const idx of set) {
    const { byte, mask } = bitOf(idx)
    bytes[byte] = (bytes[byte] as number) | mask
  }
  return `u${base64url.encode(gzipSync(bytes))}`
}

/**
 * The list of an `encodedList`, as the Token Status List reader reads lists (one bit per entry,
 * LSB-first: statusAt), so that both kinds of list share the cache and the index checks. Inflated
 * up to MAX_STATUS_LIST_BYTES (checklist S-124); shorter than 131,072 entries is
 * STATUS_LIST_LENGTH_ERROR (§3.2). Anything malformed throws StatusListError.
 */
export function decodeBitstring(encodedList: unknown): StatusList {
  if (typeof encodedList !== 'string' || !encodedList.startsWith('u'))
    throw new StatusListError('encodedList is not multibase base64url')
  let bytes: Buffer
  try {
    bytes = gunzipSync(Buffer.from(encodedList.slice(1), 'base64url'), {
      maxOutputLength: MAX_STATUS_LIST_BYTES,
    })
  } catch {
    throw new StatusListError('encodedList is not a GZIP-compressed bitstring within the size cap')
  }
  if (bytes.length * 8 < MIN_BITSTRING_ENTRIES)
    throw new StatusListError(`has fewer than ${MIN_BITSTRING_ENTRIES} entries (STATUS_LIST_LENGTH_ERROR)`)
  // Each byte's bits reversed: the left-most bit becomes the lowest, as statusAt reads them.
  for (let i = 0; i < bytes.length; i++) {
    let b = bytes[i] as number
    let reversed = 0
    for (let bit = 0; bit < 8; bit++, b >>= 1) reversed = (reversed << 1) | (b & 1)
    bytes[i] = reversed
  }
  return { bits: 1, bytes }
}

/** The `credentialStatus` of a credential at `idx` of the list at `listUri`: one entry per purpose. */
export function bitstringStatusEntries(idx: number, listUri: string): Record<string, unknown>[] {
  return BITSTRING_PURPOSES.map((purpose) => ({
    id: `${bitstringStatusListUri(listUri, purpose)}#${idx}`,
    type: 'BitstringStatusListEntry',
    statusPurpose: purpose,
    // §2.1: "The statusListIndex property MUST be an arbitrary size integer ... expressed as a string".
    statusListIndex: String(idx),
    statusListCredential: bitstringStatusListUri(listUri, purpose),
  }))
}

/**
 * The BitstringStatusListEntry members of a verified credential's `credentialStatus` (a value or a
 * set); other status types are not this verifier's and are refused rather than skipped.
 */
export function bitstringEntriesOf(credentialStatus: unknown): BitstringEntry[] {
  if (credentialStatus === undefined) return []
  return [credentialStatus].flat().map((status) => {
    const { type, statusPurpose, statusListIndex, statusListCredential } = (status ?? {}) as Record<
      string,
      unknown
    >
    const idx =
      typeof statusListIndex === 'string' && /^\d{1,15}$/.test(statusListIndex) ? Number(statusListIndex) : -1
    if (
      type !== 'BitstringStatusListEntry' ||
      typeof statusListCredential !== 'string' ||
      typeof statusPurpose !== 'string' ||
      idx < 0
    )
      throw new PresentationRejected(
        'the credentialStatus is not a BitstringStatusListEntry this verifier reads',
      )
    return { idx, uri: statusListCredential, purpose: statusPurpose }
  })
}

export interface SignBitstringStatusListOptions {
  signer: Signer
  issuer: string
  /** The status list credential's URL: its `id`, which the fetcher compares with the URL it asked. */
  uri: string
  purpose: BitstringPurpose
  size: number
  /** The indexes whose bit is 1. */
  set: Iterable<number>
  issuedAt: Date
  expiresAt: Date
  ttlSeconds: number
}

/**
 * A BitstringStatusListCredential (Bitstring Status List §2.2) secured as a vc+jwt: subject type
 * BitstringStatusList, its purpose, `encodedList` and `ttl` (in milliseconds, aligned with the
 * HTTP max-age as §2.2 asks).
 */
export function signBitstringStatusList(options: SignBitstringStatusListOptions): Promise<string> {
  return issueVcJwt({
    signer: options.signer,
    issuer: options.issuer,
    id: options.uri,
    type: ['VerifiableCredential', 'BitstringStatusListCredential'],
    subject: {
      id: `${options.uri}#list`,
      type: 'BitstringStatusList',
      statusPurpose: options.purpose,
      encodedList: encodeBitstring(options.size, options.set),
      ttl: options.ttlSeconds * 1000,
    },
    issuedAt: options.issuedAt,
    expiresAt: options.expiresAt,
    holderJwk: undefined,
  })
}
