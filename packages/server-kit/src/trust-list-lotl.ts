import type { TrustListSource } from '@credential-service/core-domain'
import {
  checkListOfTrustedListsOffThread,
  checkTrustedListOffThread,
  type TrustedListPointer,
} from '@credential-service/crypto'
import type { TrustListFetchResult } from '@credential-service/db-schema'

/** Pointed lists followed per list of lists: the EU LOTL has about 30 XML ones. */
export const MAX_POINTERS = 50
/** Pointed lists fetched at once (their checks run one at a time in the worker thread). */
const CONCURRENCY = 4
/** How far a ListIssueDateTime may lie ahead of this clock (the operator's clock may run ahead). */
const ISSUE_DATE_SKEW_MS = 5 * 60_000

type LotlSource = Extract<TrustListSource, { type: 'etsi-lotl' }>
/** Fetches a list's bytes under the outbound policy; throws with the reason when it cannot. */
export type FetchBytes = (url: string, name: string) => Promise<Uint8Array>

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * Refuses a list issued in the future: held as the newest, it would make every genuine list that
 * follows look older than it ("ListIssueDateTime went back") until that date.
 */
export function refuseFutureList(listIssuedAt: Date | null, now: Date): void {
  if (listIssuedAt && listIssuedAt.getTime() > now.getTime() + ISSUE_DATE_SKEW_MS)
    throw new Error(`its ListIssueDateTime ${listIssuedAt.toISOString()} is in the future`)
}

/** Runs `work` over `items`, `limit` at a time; the first failure rejects and stops taking new items. */
async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++
      try {
        results[index] = await work(items[index] as T)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/** One pointed list, checked with its pointer's certificates; the error names its territory and URL. */
async function readPointed(
  pointer: TrustedListPointer,
  source: LotlSource,
  fetchBytes: FetchBytes,
  check: { now: Date; timeoutMs?: number },
) {
  try {
    const bytes = await fetchBytes(pointer.location, `trusted list of ${pointer.territory}`)
    const content = await checkTrustedListOffThread(bytes, {
      ...check,
      signerCertificates: pointer.certificates,
      serviceTypes: source.serviceTypes,
    })
    if (!content.nextUpdate) throw new Error('the list has no NextUpdate (a closed list)')
    refuseFutureList(content.listIssuedAt, check.now)
    // The pointer's certificates sign one territory's list, not another's.
    if (pointer.territory && content.schemeTerritory && content.schemeTerritory !== pointer.territory)
      throw new Error(`its SchemeTerritory is ${content.schemeTerritory}`)
    return content
  } catch (error) {
    throw new Error(
      `the trusted list of territory ${pointer.territory || '(none)'} at ${pointer.location} (checked with the certificates of its pointer in the list of trusted lists): ${message(error)}`,
    )
  }
}

/**
 * ETSI TS 119 612 §5.3.13: fetches and checks a list of trusted lists, then every XML list it
 * points to (of `territories` when given) with the certificates of its pointer, and unions the
 * granted services' certificates. Any pointed list that fails fails the whole (the last good
 * content is kept, and fails closed after nextUpdate + grace): a missing territory must not look
 * like one whose services were all withdrawn. nextUpdate is the earliest of all the lists read.
 * Every list is checked in the worker thread (checkTrustedListOffThread), within `timeoutMs` each.
 */
export async function readLotlSource(
  source: LotlSource,
  fetchBytes: FetchBytes,
  check: { now: Date; timeoutMs?: number },
): Promise<TrustListFetchResult> {
  const lotl = await checkListOfTrustedListsOffThread(await fetchBytes(source.url, 'list of trusted lists'), {
    ...check,
    signerCertificates: source.signerCertificates,
    territories: source.territories,
  })
  if (!lotl.nextUpdate) throw new Error('the list of trusted lists has no NextUpdate (a closed list)')
  const pointers = lotl.pointers.filter((pointer) => pointer.location !== source.url)
  if (!pointers.length)
    throw new Error(
      `the list of trusted lists points to no XML trusted list${source.territories?.length ? ` of territories ${source.territories.join(', ')}` : ''}`,
    )
  if (pointers.length > MAX_POINTERS)
    throw new Error(
      `the list of trusted lists points to ${pointers.length} lists, more than ${MAX_POINTERS}: name the territories wanted`,
    )
  const lists = await mapLimited(pointers, CONCURRENCY, (pointer) =>
    readPointed(pointer, source, fetchBytes, check),
  )
  const nextUpdate = lists.reduce(
    (earliest, list) => (list.nextUpdate && list.nextUpdate < earliest ? list.nextUpdate : earliest),
    lotl.nextUpdate,
  )
  return {
    certificates: [...new Set(lists.flatMap((list) => list.certificates))],
    listIssuedAt: lotl.listIssuedAt,
    nextUpdate,
  }
}
