import { X509Certificate } from 'node:crypto'
import { UpstreamError } from '@credential-service/core-domain'
import { type StatusListEntry, StatusListError, statusInList } from '@credential-service/crypto'
import { type OutboundPolicy, outboundFetch } from '@credential-service/server-kit'
import { compactVerify, decodeJwt, decodeProtectedHeader } from 'jose'
import { PresentationRejected } from './sd-jwt-presentation'
import { checkChain } from './trust'

export interface StatusCheck {
  anchors: X509Certificate[]
  acceptAnyIssuer: boolean
  outbound: OutboundPolicy
  now: Date
}

const STATUS_LIST_TIMEOUT_MS = 5000

/**
 * What the presenter learns of a list that could not be fetched or read. The list URI comes from
 * the credential, so with `acceptAnyIssuer` from anyone: the reason (a non-public address, a host
 * that does not answer, the settings that allow it) would let them map the verifier's network.
 */
export const STATUS_UNCHECKED = 'the credential status could not be checked'
const unchecked = (reason: string) => new PresentationRejected(reason, STATUS_UNCHECKED)
const STATUS_NAMES: Record<number, string> = { 1: 'revoked (INVALID)', 2: 'suspended' }

/**
 * Fetches a Status List Token for a credential's entry (draft-ietf-oauth-status-list §8.3, checklist
 * V-33) under the outbound policy (`outboundFetch`: checked address, https, size cap) and checks its
 * `typ`, `sub`, expiry and `x5c` chain; the signature is checked by `verifyStatusListSignature`.
 */
async function fetchStatusList(uri: string, check: StatusCheck): Promise<string> {
  let response: Awaited<ReturnType<typeof outboundFetch>>
  try {
    // The URI comes from the credential, so from whoever issued it: same outbound rules as
    // tenant-configured URLs (checklist S-121), https unless OUTBOUND_ALLOW_HTTP.
    response = await outboundFetch(
      uri,
      {
        name: 'the status list',
        headers: { accept: 'application/statuslist+jwt' },
        timeoutMs: STATUS_LIST_TIMEOUT_MS,
      },
      check.outbound,
    )
  } catch (error) {
    throw unchecked(error instanceof UpstreamError ? error.detail : 'the status list could not be fetched')
  }
  if (response.status < 200 || response.status >= 300)
    throw unchecked(`the status list could not be fetched: HTTP ${response.status}`)
  const token = response.body.toString('utf8')
  let header: ReturnType<typeof decodeProtectedHeader>
  let payload: ReturnType<typeof decodeJwt>
  try {
    header = decodeProtectedHeader(token)
    payload = decodeJwt(token)
  } catch {
    throw unchecked('the status list is not a JWT')
  }
  if (header.typ !== 'statuslist+jwt') throw unchecked('the status list token typ is not statuslist+jwt')
  if (payload.sub !== uri) throw unchecked('the status list token is for another URI')
  if (typeof payload.exp === 'number' && payload.exp * 1000 <= check.now.getTime())
    throw unchecked('the status list token has expired')
  // The status list signer's EKU (id-kp-oauthStatusSigning, TSL §10) has no OID yet: issuer rules.
  const chainProblem = check.acceptAnyIssuer
    ? undefined
    : await checkChain(header.x5c, check.anchors, check.now)
  if (chainProblem) throw unchecked(`status list: ${chainProblem}`)
  return token
}

/** The status list token is signed by the leaf of its `x5c` (whose chain `fetchStatusList` checked). */
async function verifyStatusListSignature(token: string): Promise<void> {
  const leaf = new X509Certificate(
    Buffer.from(String((decodeProtectedHeader(token).x5c as string[])[0]), 'base64'),
  )
  await compactVerify(token, leaf.publicKey)
}

/** Anything but VALID (0) refuses the presentation. */
function requireValid(status: number): void {
  if (status !== 0)
    throw new PresentationRejected(`the credential is ${STATUS_NAMES[status] ?? `in status ${status}`}`)
}

/**
 * The `status.status_list` of a verified credential, read only when it is well-formed (TSL §6.2,
 * checklist F-33: `idx` a non-negative integer, `uri` a string); anything else rejects.
 */
export function statusListEntryOf(status: unknown): StatusListEntry | undefined {
  if (typeof status !== 'object' || status === null) return undefined
  const entry = (status as { status_list?: unknown }).status_list
  if (entry === undefined) return undefined
  const { idx, uri } = (entry ?? {}) as { idx?: unknown; uri?: unknown }
  if (typeof uri !== 'string' || typeof idx !== 'number' || !Number.isSafeInteger(idx) || idx < 0)
    throw new PresentationRejected('the credential’s status_list is not {idx, uri}')
  return { idx, uri }
}

/**
 * The status of a credential's entry (TSL §8.3), for SD-JWT VCs and mdoc MSOs alike: the fetch and
 * checks, the signature, then the entry's bits read with the size-capped decoder (checklist S-124).
 * Every failure rejects the presentation: an undetermined status is never VALID.
 */
export async function requireValidEntry(entry: StatusListEntry, check: StatusCheck): Promise<void> {
  const token = await fetchStatusList(entry.uri, check)
  try {
    await verifyStatusListSignature(token)
  } catch {
    throw unchecked('the status list signature does not verify')
  }
  let status: number
  try {
    status = statusInList(token, entry.idx)
  } catch (error) {
    if (!(error instanceof StatusListError)) throw error
    throw unchecked(`the status list ${error.message}`)
  }
  requireValid(status)
}
