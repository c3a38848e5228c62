import { checkCbor } from '../cbor-guard'
import type { StatusListEntry } from '../status-list-token'
import { loadCbor } from './cbor'

/**
 * The `status.status_list` entry of an MSO (TSL §6.3, ISO 18013-5 2nd ed.), read from the
 * IssuerAuth payload (`#6.24(bstr .cbor MobileSecurityObject)`) after its signature was verified.
 * Undefined when the MSO names none; an entry of the wrong shape is an error.
 */
export async function msoStatusEntry(issuerAuthPayload: Uint8Array): Promise<StatusListEntry | undefined> {
  const checked = checkCbor(issuerAuthPayload)
  if (!checked.ok) throw new Error(`the IssuerAuth payload is refused: ${checked.reason}`)
  const { cbor, Tag } = await loadCbor()
  const tagged = cbor.decode(issuerAuthPayload) as unknown
  // cbor-x extensions are process-wide: where @owf/mdoc is loaded (the verifier), tag 24 decodes
  // to its DataItem, whose `buffer` holds the embedded bytes.
  const inner =
    tagged instanceof Tag
      ? tagged.tag === 24
        ? tagged.value
        : undefined
      : (tagged as { buffer?: unknown } | null)?.buffer
  if (!(inner instanceof Uint8Array)) throw new Error('the IssuerAuth payload is not a tagged MSO')
  const mso = cbor.decode(inner) as Map<string, unknown>
  const status = mso instanceof Map ? mso.get('status') : undefined
  if (status === undefined) return undefined
  const entry = status instanceof Map ? status.get('status_list') : undefined
  const idx = entry instanceof Map ? entry.get('idx') : undefined
  const uri = entry instanceof Map ? entry.get('uri') : undefined
  if (!Number.isInteger(idx) || (idx as number) < 0 || typeof uri !== 'string')
    throw new Error('the MSO status is not a status_list {idx, uri}')
  return { idx: idx as number, uri }
}
