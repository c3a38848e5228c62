import { sql } from 'drizzle-orm'
import type { Database } from '../database'
import { issuanceSessions, presentationSessions } from '../schema'
import { rowsOf } from './rows'

export interface IssuanceStatsRow {
  credentialConfigurationId: string
  offered: number
  issued: number
  failed: number
  expired: number
}

export interface PresentationStatsRow {
  presentationConfigId: string
  requested: number
  verified: number
  failed: number
  expired: number
}

/**
 * Counts of a tenant's sessions created in [since, now), per configuration, read from the
 * sessions tables (the metrics are per process). Both queries are a range scan of the
 * `…_sessions_created` index (tenant_id, created_at, id) and the rows it finds.
 */
export function createSessionStatsRepository(db: Database, tenantId: string) {
  return {
    async issuance(since: Date, now: Date): Promise<IssuanceStatsRow[]> {
      // An offer of several configurations counts once for each; issued when that one was.
      const result = await db.execute(sql`
        select c.config_id as "credentialConfigurationId",
          count(*)::int as "offered",
          count(*) filter (where c.config_id = any(s.issued_configuration_ids))::int as "issued",
          count(*) filter (where s.status = 'failed')::int as "failed",
          count(*) filter (where s.status = 'offered' and s.expires_at <= ${now.toISOString()}::timestamptz)::int as "expired"
        from ${issuanceSessions} s cross join lateral unnest(s.credential_configuration_ids) as c(config_id)
        where s.tenant_id = ${tenantId} and s.created_at >= ${since.toISOString()}::timestamptz
        group by c.config_id
        order by c.config_id`)
      return rowsOf(result) as IssuanceStatsRow[]
    },

    async presentation(since: Date, now: Date): Promise<PresentationStatsRow[]> {
      const result = await db.execute(sql`
        select s.presentation_config_id as "presentationConfigId",
          count(*)::int as "requested",
          count(*) filter (where s.status = 'verified')::int as "verified",
          count(*) filter (where s.status = 'failed')::int as "failed",
          count(*) filter (where s.status = 'pending' and s.expires_at <= ${now.toISOString()}::timestamptz)::int as "expired"
        from ${presentationSessions} s
        where s.tenant_id = ${tenantId} and s.created_at >= ${since.toISOString()}::timestamptz
        group by s.presentation_config_id
        order by s.presentation_config_id`)
      return rowsOf(result) as PresentationStatsRow[]
    },
  }
}
