import { sql } from 'drizzle-orm'
import type { Executor } from '../database'
import { credentialConfigs, deferredCredentials, issuanceSessions, presentationSessions } from '../schema'
import { rowsOf } from './rows'

/** An expired session claimed by the sweep, once per webhook endpoint it reports to. */
export interface ExpiredOffer {
  tenantId: string
  sessionId: string
  expiresAt: Date
  /** `offered`: never redeemed; `token_issued`: redeemed, and no credential was asked for. */
  stage: 'offered' | 'token_issued'
  endpointId: string
  /** The session's offered configurations that name this endpoint. */
  configurationIds: string[]
}

export interface ExpiredRequest {
  tenantId: string
  sessionId: string
  presentationConfigId: string
  endpointId: string
}

const hasEndpoint = (row: Record<string, unknown>) =>
  row.endpoint_id !== null && row.endpoint_id !== undefined
const asDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)))

/**
 * Claims up to `limit` offers that passed their expiry unredeemed, or were redeemed and abandoned
 * (`token_issued`: no credential issued, both the offer and its access token, issued
 * `tokenSeconds` after the redemption, expired; no deferred transaction open), and were not
 * reported yet: one statement marks them (`expiry_reported_at`) and answers their webhook endpoints. The row lock
 * and the `is null` condition make one sweep the only one to claim an offer, across processes
 * (SKIP LOCKED: concurrent sweeps take other rows). Offers without an endpoint are marked too,
 * and answer nothing. Run it in the transaction that stores the events.
 */
export async function claimExpiredOffers(
  tx: Executor,
  now: Date,
  limit: number,
  tokenSeconds: number,
): Promise<{ claimed: number; offers: ExpiredOffer[] }> {
  const s = issuanceSessions
  const c = credentialConfigs
  const d = deferredCredentials
  const at = sql`${now.toISOString()}::timestamptz`
  const result = await tx.execute(sql`
    with due as (
      select ${s.tenantId}, ${s.id} from ${s}
      where ${s.status} in ('offered', 'token_issued') and ${s.expiryReportedAt} is null
        and ${s.expiresAt} <= ${at}
        and (${s.status} = 'offered' or (
          ${s.tokenIssuedAt} <= ${at} - make_interval(secs => ${tokenSeconds})
          and not exists (select 1 from ${d} where ${d.tenantId} = ${s.tenantId} and ${d.sessionId} = ${s.id})))
      order by ${s.expiresAt} limit ${limit}
      for update skip locked
    ), claimed as (
      update ${s} set expiry_reported_at = ${now.toISOString()}::timestamptz
      from due where ${s.tenantId} = due.tenant_id and ${s.id} = due.id and ${s.expiryReportedAt} is null
      returning ${s.tenantId} as tenant_id, ${s.id} as id, ${s.credentialConfigurationIds} as ids,
        ${s.expiresAt} as expires_at, ${s.status} as stage
    )
    select claimed.tenant_id, claimed.id, claimed.expires_at, claimed.stage, ${c.webhookEndpointId} as endpoint_id,
      array_agg(${c.id} order by ${c.id}) as configuration_ids
    from claimed left join ${c} on ${c.tenantId} = claimed.tenant_id and ${c.id} = any(claimed.ids)
      and ${c.webhookEndpointId} is not null
    group by claimed.tenant_id, claimed.id, claimed.expires_at, claimed.stage, ${c.webhookEndpointId}`)
  const rows = rowsOf(result) as Record<string, unknown>[]
  const offers = rows.filter(hasEndpoint).map((row) => ({
    tenantId: String(row.tenant_id),
    sessionId: String(row.id),
    expiresAt: asDate(row.expires_at),
    stage: row.stage === 'token_issued' ? ('token_issued' as const) : ('offered' as const),
    endpointId: String(row.endpoint_id),
    configurationIds: (row.configuration_ids as string[]).map(String),
  }))
  return { claimed: new Set(rows.map((row) => `${row.tenant_id}/${row.id}`)).size, offers }
}

/** The same for presentation requests that expired unanswered (their own `webhook_endpoint_id`). */
export async function claimExpiredRequests(
  tx: Executor,
  now: Date,
  limit: number,
): Promise<{ claimed: number; requests: ExpiredRequest[] }> {
  const p = presentationSessions
  const result = await tx.execute(sql`
    with due as (
      select ${p.tenantId}, ${p.id} from ${p}
      where ${p.status} = 'pending' and ${p.expiryReportedAt} is null
        and ${p.expiresAt} <= ${now.toISOString()}::timestamptz
      order by ${p.expiresAt} limit ${limit}
      for update skip locked
    )
    update ${p} set expiry_reported_at = ${now.toISOString()}::timestamptz
    from due where ${p.tenantId} = due.tenant_id and ${p.id} = due.id and ${p.expiryReportedAt} is null
    returning ${p.tenantId} as tenant_id, ${p.id} as id, ${p.presentationConfigId} as config_id,
      ${p.webhookEndpointId} as endpoint_id`)
  const rows = rowsOf(result) as Record<string, unknown>[]
  const requests = rows.filter(hasEndpoint).map((row) => ({
    tenantId: String(row.tenant_id),
    sessionId: String(row.id),
    presentationConfigId: String(row.config_id),
    endpointId: String(row.endpoint_id),
  }))
  return { claimed: rows.length, requests }
}
