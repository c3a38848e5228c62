import { X509Certificate } from 'node:crypto'
import type { OutboundUrlPolicy } from '@credential-service/core-domain'
import { assertPublicAddress } from '@credential-service/server-kit'
import { StatusList } from '@sd-jwt/jwt-status-list'
import { compactVerify, decodeProtectedHeader } from 'jose'
import { PresentationRejected } from './sd-jwt-presentation'
import { checkChain } from './trust'

export interface StatusCheck {
  status: unknown
  anchors: X509Certificate[]
  acceptAnyIssuer: boolean
  outbound: OutboundUrlPolicy
  now: Date
}

const STATUS_NAMES: Record<number, string> = { 1: 'revoked (INVALID)', 2: 'suspended' }

/**
 * Token Status List (draft-ietf-oauth-status-list §8.3, checklist V-33): fetches the status list
 * token at `status.status_list.uri`, checks its `typ`, signature and `x5c` chain, `sub` and
 * expiry, and reads the credential's entry at `idx`. Anything but VALID (0), or a list that cannot
 * be checked, rejects the presentation (fail closed).
 */
export async function checkStatusList(check: StatusCheck): Promise<void> {
  const reference = (check.status as { status_list?: { idx?: unknown; uri?: unknown } } | undefined)
    ?.status_list
  if (!reference || typeof reference.uri !== 'string' || !Number.isInteger(reference.idx)) {
    throw new PresentationRejected('the credential status is not a status_list reference')
  }
  let token: string
  try {
    const url = new URL(reference.uri)
    await assertPublicAddress(url, check.outbound, 'status list')
    const response = await fetch(url, {
      headers: { accept: 'application/statuslist+jwt' },
      redirect: 'error',
      signal: AbortSignal.timeout(5000),
    })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    token = await response.text()
  } catch (error) {
    throw new PresentationRejected(`the status list could not be fetched: ${(error as Error).message}`)
  }
  let payload: Record<string, unknown>
  try {
    const header = decodeProtectedHeader(token)
    if (header.typ !== 'statuslist+jwt') throw new Error('typ is not statuslist+jwt')
    const chainProblem = checkChain(header.x5c, check.anchors, check.now)
    if (chainProblem && !check.acceptAnyIssuer) throw new Error(chainProblem)
    const leaf = new X509Certificate(Buffer.from(String((header.x5c as string[])[0]), 'base64'))
    payload = JSON.parse(
      new TextDecoder().decode((await compactVerify(token, leaf.publicKey)).payload),
    ) as Record<string, unknown>
  } catch (error) {
    throw new PresentationRejected(`the status list token did not verify: ${(error as Error).message}`)
  }
  if (payload.sub !== reference.uri)
    throw new PresentationRejected('the status list token is for another URI')
  if (typeof payload.exp === 'number' && payload.exp * 1000 <= check.now.getTime())
    throw new PresentationRejected('the status list token has expired')
  const list = payload.status_list as { bits?: number; lst?: string } | undefined
  let status: number
  try {
    status = StatusList.decompressStatusList(String(list?.lst), (list?.bits ?? 1) as 1).getStatus(
      reference.idx as number,
    )
  } catch {
    throw new PresentationRejected('the status list has no entry for this credential')
  }
  if (status !== 0)
    throw new PresentationRejected(`the credential is ${STATUS_NAMES[status] ?? `in status ${status}`}`)
}
