import { readListOfTrustedEntities, readTrustedList } from '@credential-service/crypto'
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
import { readLotlSource } from './trust-list-lotl'

/** A list server gets this long to answer; a slow one fails the fetch, the last good content stays. */
const FETCH_TIMEOUT_MS = 15_000
/** Lists fetched per run and process; more wait for the next run (or another process). */
const BATCH = 20

export interface TrustListRefreshDeps {
  db: Database
  outbound: OutboundPolicy
  metrics?: Pick<Metrics, 'trustListRefreshed'>
  now?: () => Date
}

/** Fetches one list's text under the outbound policy; throws with the reason it cannot. */
async function fetchText(url: string, name: string, outbound: OutboundPolicy): Promise<string> {
  const response = await outboundFetch(
    url,
    { name, purpose: 'trust-list', timeoutMs: FETCH_TIMEOUT_MS },
    outbound,
  )
  if (response.status !== 200) throw new Error(`${name}: the list server answered ${response.status}`)
  return response.body.toString('utf8')
}

/**
 * Fetches and checks one list (TS 119 612 XML, a TS 119 612 list of lists with the lists it
 * points to, or TS 119 602 JWS); throws with the reason it is refused.
 */
async function fetchList(
  row: TrustListRow,
  outbound: OutboundPolicy,
  now: Date,
): Promise<TrustListFetchResult> {
  const source = row.source
  if (source.type === 'pem') throw new Error('not a fetched list')
  const name = `trust list '${row.id}'`
  let content: TrustListFetchResult
  if (source.type === 'etsi-lotl') {
    content = await readLotlSource(source, (url, what) => fetchText(url, `${name}: ${what}`, outbound), now)
  } else {
    const text = await fetchText(source.url, name, outbound)
    const { certificates, listIssuedAt, nextUpdate } =
      source.type === 'lote'
        ? await readListOfTrustedEntities(text, source.signerCertificates, source.serviceTypes)
        : await readTrustedList(text, source.signerCertificates, source.serviceTypes, now)
    content = { certificates, listIssuedAt, nextUpdate }
  }
  // TS 119 612 §5.3.15: a list without NextUpdate is closed; nothing in it is to be trusted any more.
  if (!content.nextUpdate) throw new Error('the list has no NextUpdate (a closed list)')
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
  await Promise.all(
    claimed.map(async (row) => {
      let result: { ok: TrustListFetchResult } | { error: string }
      try {
        result = { ok: await fetchList(row, deps.outbound, now()) }
      } catch (error) {
        result = { error: error instanceof Error ? error.message : String(error) }
      }
      deps.metrics?.trustListRefreshed(row.tenantId, 'ok' in result ? 'ok' : 'failed')
      await recordTrustListFetch(deps.db, row, result, now())
    }),
  )
  return claimed.length
}

/** Runs the refresh job every `everySeconds` in the app's process (TRUST_LIST_REFRESH_CHECK_SECONDS). */
export function scheduleTrustListRefresh(
  app: FastifyInstance,
  everySeconds: number,
  deps: TrustListRefreshDeps,
) {
  scheduleJob(app, 'trust list refresh', everySeconds, () => refreshDueTrustLists(deps))
}
