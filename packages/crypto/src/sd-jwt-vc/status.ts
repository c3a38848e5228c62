import { PresentationRejected } from '../presentation'
import type { StatusListEntry } from '../status-list-token'

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
