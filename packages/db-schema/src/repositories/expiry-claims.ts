import { sql } from 'drizzle-orm'
import type { Executor } from '../database'
import { credentialConfigs, issuanceSessions, presentationSessions } from '../schema'
import { rowsOf } from './rows'

/** An expired session claimed by the sweep, once per webhook endpoint it reports to. */
export interface ExpiredOffer {
  tenantId: string
  sessionId: string
  expiresAt: Date
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
 * Claims up to `limit` offers that passed their expiry unredeemed and were not reported yet: one
 * statement marks them (`expiry_reported_at`) and answers their webhook endpoints. The row lock
 * and the `is null` condition make one sweep the only one to claim an offer, across processes
 * (SKIP LOCKED: concurrent sweeps take other rows). Offers without an endpoint are marked too,
 * and answer nothing. Run it in the transaction that stores the events.
 */
export async function claimExpiredOffers(
  tx: Executor,
  now: Date,
  limit: number,
): Promise<{ claimed: number; offers: ExpiredOffer[] }> {
  const s = issuanceSessions
  const c = credentialConfigs
  const result = await tx.execute(sql`
    with due as (
      select ${s.tenantId}, ${s.id} from ${s}
      where ${s.status} = 'offered' and ${s.expiryReportedAt} is null
        and ${s.expiresAt} <= ${now.toISOString()}::timestamptz
      order by ${s.expiresAt} limit ${limit}
      for update skip locked
    ), claimed as (
      update ${s} set expiry_reported_at = ${now.toISOString()}::timestamptz
      from due where ${s.tenantId} = due.tenant_id and ${s.id} = due.id and ${s.expiryReportedAt} is null
      returning ${s.tenantId} as tenant_id, ${s.id} as id, ${s.credentialConfigurationIds} as ids,
        ${s.expiresAt} as expires_at
    )
    select claimed.tenant_id, claimed.id, claimed.expires_at, ${c.webhookEndpointId} as endpoint_id,
      array_agg(${c.id} order by ${c.id}) as configuration_ids
    from claimed left join ${c} on ${c.tenantId} = claimed.tenant_id and ${c.id} = any(claimed.ids)
      and ${c.webhookEndpointId} is not null
    group by claimed.tenant_id, claimed.id, claimed.expires_at, ${c.webhookEndpointId}`)
  const rows = rowsOf(result) as Record<string, unknown>[]
  const offers = rows.filter(hasEndpoint).map((row) => ({
    tenantId: String(row.tenant_id),
    sessionId: String(row.id),
    expiresAt: asDate(row.expires_at),
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
