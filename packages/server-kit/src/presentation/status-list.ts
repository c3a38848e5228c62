import { createHash, type X509Certificate } from 'node:crypto'
import { UpstreamUnavailableError } from '@credential-service/core-domain'
import {
  checkChain,
  PresentationRejected,
  type PresentationTrust,
  type StatusListEntry,
  StatusListError,
  statusAt,
} from '@credential-service/crypto'
import { onStatusListChange } from '@credential-service/db-schema'
import type { OutboundPolicy } from '../outbound-fetch'
import { createStatusListCache, type StatusListCache, type StatusListCacheOptions } from './status-list-cache'
import {
  type FetchedList,
  fetchStatusList,
  STATUS_RETRY_AFTER_SECONDS,
  type StatusListForm,
  unchecked,
} from './status-list-fetch'

export type StatusLists = StatusListCache<FetchedList>
export const createStatusLists = (options: StatusListCacheOptions): StatusLists =>
  createStatusListCache<FetchedList>(options)

/**
 * Checklist F-35: this deployment's own lists (`{publicUrl}/issuers/{tenant}/status-lists/…`) are
 * dropped from `statusLists` as soon as their entries change, in this process or another, so a
 * revocation counts at the next presentation; lists of other issuers keep their TTL. Returns the
 * unsubscribe function.
 */
export function forgetOwnListsOnChange(statusLists: StatusLists, publicUrl: string): () => void {
  return onStatusListChange((tenantId) => {
    const own = `${publicUrl}/issuers/${tenantId}/status-lists/`
    statusLists.deleteMatching((uri) => uri.startsWith(own))
  })
}

export interface StatusCheck {
  anchors: X509Certificate[]
  acceptAnyIssuer: boolean
  outbound: OutboundPolicy
  now: Date
  /** The process's cache of fetched lists. */
  statusLists: StatusLists
}

const STATUS_NAMES: Record<number, string> = { 1: 'revoked (INVALID)', 2: 'suspended' }

/**
 * The list at `uri`: the cached copy while it is fresh, else fetched (revalidated with its ETag
 * while it is still valid), one fetch for concurrent callers. When its server cannot answer now,
 * the last good copy stands in for `staleIfErrorSeconds` past its freshness (never past its
 * validity); any other failure drops it (fail closed).
 */
async function currentList(uri: string, check: StatusCheck, prefer: StatusListForm): Promise<FetchedList> {
  const { statusLists } = check
  const now = check.now.getTime()
  const cached = statusLists.get(uri)
  if (cached && cached.freshUntil > now) return cached
  // A server that just failed is not asked again at once: each use would wait out its timeout.
  if (cached && (cached.quietUntil ?? 0) > now && standsIn(cached, now, statusLists)) return cached
  return statusLists.shared(uri, async () => {
    const generation = statusLists.generation
    try {
      const list = await fetchStatusList({
        uri,
        outbound: check.outbound,
        now: check.now,
        maxSeconds: statusLists.maxSeconds,
        previous: cached && cached.validUntil > now ? cached : undefined,
        prefer,
      })
      // A list that changed while this fetch ran may have come back in its old state: not kept.
      const current = statusLists.generation === generation
      if (current && !list.noStore && (list.freshUntil > now || list.etag)) statusLists.set(uri, list)
      else statusLists.delete(uri)
      return list
    } catch (error) {
      if (error instanceof UpstreamUnavailableError && cached && standsIn(cached, now, statusLists)) {
        cached.quietUntil = now + STATUS_RETRY_AFTER_SECONDS * 1000
        return cached
      }
      statusLists.delete(uri)
      throw error
    }
  })
}

/** Whether a kept list may answer while its server cannot (RFC 5861 §4 stale-if-error, RFC 9111 §4.2.4). */
function standsIn(list: FetchedList, now: number, statusLists: StatusLists): boolean {
  return (
    list.staleIfError &&
    list.validUntil > now &&
    now < list.freshUntil + statusLists.staleIfErrorSeconds * 1000
  )
}

/** The anchor set a chain was checked against, as one string. */
function trustFingerprint(anchors: X509Certificate[]): string {
  const hash = createHash('sha256')
  for (const fingerprint of anchors.map((anchor) => anchor.fingerprint256).sort()) hash.update(fingerprint)
  return hash.digest('base64url')
}

/**
 * The list's `x5c` chains to the tenant's anchors (issuer rules: the status list signer's EKU,
 * id-kp-oauthStatusSigning, TSL §10, has no OID yet). A cached list is checked once per anchor set,
 * so a list fetched for one tenant is never taken on another tenant's trust unchecked.
 */
async function requireTrusted(list: FetchedList, check: StatusCheck): Promise<void> {
  if (check.acceptAnyIssuer) return
  const fingerprint = trustFingerprint(check.anchors)
  if (list.trusted.has(fingerprint)) return
  const problem = await checkChain(list.x5c, check.anchors, check.now)
  if (problem) throw unchecked(`status list: ${problem}`)
  list.trusted.add(fingerprint)
}

/** Anything but VALID (0) refuses the presentation. */
function requireValid(status: number): void {
  if (status !== 0)
    throw new PresentationRejected(`the credential is ${STATUS_NAMES[status] ?? `in status ${status}`}`)
}

/**
 * The status of a credential's entry (TSL §8.3), for SD-JWT VCs and mdoc MSOs alike: the list
 * (fetched and verified, or cached), its chain under this check's trust, then the entry's bits
 * from the size-capped list (checklist S-124). An undetermined status is never VALID: a list its
 * server cannot give now throws UpstreamUnavailableError (retry, S-135), any other failure
 * rejects the presentation.
 */
export async function requireValidEntry(
  entry: StatusListEntry & { purpose?: string },
  check: StatusCheck,
  prefer: StatusListForm = 'jwt',
): Promise<void> {
  // One list, two forms: the format's verifier names the one it asks for first (an mdoc the CWT,
  // as ISO 18013-5 2nd ed. relying parties read CBOR). The cache holds the list whichever form
  // brought it. A W3C VC names a status list credential instead, cached by the same rules.
  const list = await currentList(entry.uri, check, prefer)
  if ((list.form === 'bitstring') !== (prefer === 'bitstring'))
    throw unchecked('the status list is not of the kind the credential names')
  // Bitstring Status List §3.2: "Verify that the status purpose is equal to a statusPurpose value".
  if (list.form === 'bitstring' && list.purpose !== entry.purpose)
    throw unchecked(`the status list credential is not for statusPurpose '${entry.purpose}'`)
  await requireTrusted(list, check)
  let status: number
  try {
    status = statusAt(list.list, entry.idx)
  } catch (error) {
    if (!(error instanceof StatusListError)) throw error
    throw unchecked(`the status list ${error.message}`)
  }
  // A set bit of a `suspension` list is SUSPENDED; of any other purpose, INVALID.
  requireValid(status !== 0 && entry.purpose === 'suspension' ? 2 : status)
}

/**
 * What the format modules (`verifySdJwtPresentation`, `verifyMdocPresentation`) get for one
 * response: its trust and clock, and the status port, which checks an entry through the process's
 * cache of lists fetched under the outbound policy.
 */
export function presentationTrust(check: StatusCheck): PresentationTrust {
  const { anchors, acceptAnyIssuer, now } = check
  return {
    anchors,
    acceptAnyIssuer,
    now,
    requireValidStatus: (entry, form) => requireValidEntry(entry, check, form),
  }
}
