import { X509Certificate } from 'node:crypto'
import { UpstreamError } from '@credential-service/core-domain'
import { type StatusListEntry, statusInList } from '@credential-service/crypto'
import { type OutboundPolicy, outboundFetch } from '@credential-service/server-kit'
import type { SDJWTVCConfig } from '@sd-jwt/sd-jwt-vc'
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
    throw new PresentationRejected(
      error instanceof UpstreamError ? error.detail : 'the status list could not be fetched',
    )
  }
  if (response.status < 200 || response.status >= 300)
    throw new PresentationRejected(`the status list could not be fetched: HTTP ${response.status}`)
  const token = response.body.toString('utf8')
  let header: ReturnType<typeof decodeProtectedHeader>
  let payload: ReturnType<typeof decodeJwt>
  try {
    header = decodeProtectedHeader(token)
    payload = decodeJwt(token)
  } catch {
    throw new PresentationRejected('the status list is not a JWT')
  }
  if (header.typ !== 'statuslist+jwt')
    throw new PresentationRejected('the status list token typ is not statuslist+jwt')
  if (payload.sub !== uri) throw new PresentationRejected('the status list token is for another URI')
  if (typeof payload.exp === 'number' && payload.exp * 1000 <= check.now.getTime())
    throw new PresentationRejected('the status list token has expired')
  const chainProblem = checkChain(header.x5c, check.anchors, check.now)
  if (chainProblem && !check.acceptAnyIssuer) throw new PresentationRejected(`status list: ${chainProblem}`)
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
 * The Token Status List hooks of @sd-jwt/sd-jwt-vc: the library reads the list and the credential's
 * entry; these fetch and check the token, verify its signature and reject anything but VALID.
 */
export function statusListHooks(
  check: StatusCheck,
): Pick<SDJWTVCConfig, 'statusListFetcher' | 'statusVerifier' | 'statusValidator'> {
  return {
    statusListFetcher: (uri: string) => fetchStatusList(uri, check),
    statusVerifier: async (data: string, signature: string) => {
      await verifyStatusListSignature(`${data}.${signature}`)
      return true
    },
    statusValidator: async (status: number) => requireValid(status),
  }
}

/**
 * The status of an mdoc's MSO entry (TSL §6.3, §8.3): the same fetch, checks and signature as for
 * SD-JWT VCs, then the entry's bits read from the list. Every failure rejects the presentation.
 */
export async function requireValidEntry(entry: StatusListEntry, check: StatusCheck): Promise<void> {
  const token = await fetchStatusList(entry.uri, check)
  try {
    await verifyStatusListSignature(token)
  } catch {
    throw new PresentationRejected('the status list signature does not verify')
  }
  let status: number
  try {
    status = await statusInList(token, entry.idx)
  } catch {
    throw new PresentationRejected('the status list has no entry at the credential’s index')
  }
  requireValid(status)
}
