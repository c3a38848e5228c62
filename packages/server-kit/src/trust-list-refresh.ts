import { checkListOfTrustedEntitiesOffThread, checkTrustedListOffThread } from '@credential-service/crypto'
import {
  claimDueTrustLists,
  type Database,
  recordTrustListFetch,
  type TrustListFetchResult,
  type TrustListRow,
} from '@credential-service/db-schema'
import type { FastifyInstance } from 'fastify'
import type { Metrics } from './metrics'
import { type OutboundPolicy, outboundFetch } from './outbound-fetch'
import { scheduleJob } from './runtime-policies'
import { readLotlSource, refuseFutureList } from './trust-list-lotl'

/** A list server gets this long to answer; a slow one fails the fetch, the last good content stays. */
const FETCH_TIMEOUT_MS = 15_000
/** Lists fetched per run and process; more wait for the next run (or another process). */
const BATCH = 20
/**
 * Lists read at once: their checks queue for the one worker thread anyway, and each holds up to
 * TRUST_LIST_MAX_BYTES (a list of lists, four of them) in memory meanwhile.
 */
const CONCURRENT_LISTS = 2

/** TRUST_LIST_MAX_BYTES and TRUST_LIST_CHECK_TIMEOUT_SECONDS. */
export interface TrustListLimits {
  /** Largest list read (each list a list of lists points to too). */
  maxBytes: number
  /** Longest one list may take to parse and check in the worker thread. */
  checkTimeoutMs: number
}

export const DEFAULT_TRUST_LIST_LIMITS: TrustListLimits = {
  maxBytes: 8 * 1024 * 1024,
  checkTimeoutMs: 60_000,
}

export interface TrustListRefreshDeps {
  db: Database
  outbound: OutboundPolicy
  /** Undefined: DEFAULT_TRUST_LIST_LIMITS. */
  trustListLimits?: TrustListLimits
  metrics?: Pick<Metrics, 'trustListRefreshed'>
  now?: () => Date
}

/** Fetches one list's bytes under the outbound policy, streamed up to `maxBytes`; throws with the reason it cannot. */
async function fetchBytes(
  url: string,
  name: string,
  outbound: OutboundPolicy,
  maxBytes: number,
): Promise<Uint8Array> {
  const response = await outboundFetch(
    url,
    { name, purpose: 'trust-list', timeoutMs: FETCH_TIMEOUT_MS, maxBytes },
    outbound,
  )
  if (response.status !== 200) throw new Error(`${name}: the list server answered ${response.status}`)
  return response.body
}

/**
 * Fetches and checks one list (TS 119 612 XML, a TS 119 612 list of lists with the lists it
 * points to, or TS 119 602 JWS); throws with the reason it is refused. Lists are parsed and
 * checked in the worker thread (checkTrustedListOffThread), never on the event loop.
 */
async function fetchList(
  row: TrustListRow,
  deps: TrustListRefreshDeps,
  now: Date,
): Promise<TrustListFetchResult> {
  const source = row.source
  if (source.type === 'pem' || source.type === 'openid-federation') throw new Error('not a fetched list')
  const limits = deps.trustListLimits ?? DEFAULT_TRUST_LIST_LIMITS
  const name = `trust list '${row.id}'`
  const fetch = (url: string, what: string) => fetchBytes(url, what, deps.outbound, limits.maxBytes)
  const check = { now, timeoutMs: limits.checkTimeoutMs }
  let content: TrustListFetchResult
  if (source.type === 'etsi-lotl') {
    content = await readLotlSource(source, (url, what) => fetch(url, `${name}: ${what}`), check)
  } else {
    const read = source.type === 'lote' ? checkListOfTrustedEntitiesOffThread : checkTrustedListOffThread
    const { certificates, listIssuedAt, nextUpdate } = await read(await fetch(source.url, name), {
      ...check,
      signerCertificates: source.signerCertificates,
      serviceTypes: source.serviceTypes,
    })
    content = { certificates, listIssuedAt, nextUpdate }
  }
  // TS 119 612 §5.3.15: a list without NextUpdate is closed; nothing in it is to be trusted any more.
  if (!content.nextUpdate) throw new Error('the list has no NextUpdate (a closed list)')
  refuseFutureList(content.listIssuedAt, now)
  // An older list than the one held (a replayed one) would bring back what was withdrawn since.
  if (row.listIssuedAt && content.listIssuedAt && content.listIssuedAt < row.listIssuedAt)
    throw new Error('the list is older than the one held (ListIssueDateTime went back)')
  return content
}

/**
 * One run of the refresh job: claims the due lists (one process per list and interval, see
 * claimDueTrustLists), fetches each and records the content or the failure. Returns how many
 * lists were fetched.
 */
export async function refreshDueTrustLists(deps: TrustListRefreshDeps): Promise<number> {
  const now = deps.now ?? (() => new Date())
  const claimed = await claimDueTrustLists(deps.db, now(), BATCH)
  let next = 0
  const reader = async () => {
    while (next < claimed.length) {
      const row = claimed[next++] as TrustListRow
      let result: { ok: TrustListFetchResult } | { error: string }
      try {
        result = { ok: await fetchList(row, deps, now()) }
      } catch (error) {
        result = { error: error instanceof Error ? error.message : String(error) }
      }
      deps.metrics?.trustListRefreshed(row.tenantId, 'ok' in result ? 'ok' : 'failed')
      await recordTrustListFetch(deps.db, row, result, now())
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_LISTS, claimed.length) }, reader))
  return claimed.length
}

/**
 * Runs the refresh job every `everySeconds` in the app's process (TRUST_LIST_REFRESH_CHECK_SECONDS).
 * A run still reading lists when the next is due lets it pass: the lists it claimed wait in the
 * worker's queue, and more claims would only lengthen that queue.
 */
export function scheduleTrustListRefresh(
  app: FastifyInstance,
  everySeconds: number,
  deps: TrustListRefreshDeps,
) {
  let running = false
  scheduleJob(app, 'trust list refresh', everySeconds, async () => {
    if (running) return 0
    running = true
    try {
      return await refreshDueTrustLists(deps)
    } finally {
      running = false
    }
  })
}
