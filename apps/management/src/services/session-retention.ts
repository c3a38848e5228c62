import type { SessionDataCipher } from '@credential-service/crypto'
import {
  type Database,
  dropUnreleasedResults,
  dropUnusableOfferClaims,
  purgeSessions,
  purgeWebhookDeliveries,
  sealLegacySessionData,
} from '@credential-service/db-schema'

export interface SessionRetentionDeps {
  db: Database
  /** Encrypts offer claims and presentation results still stored in clear (rows from before 0007). */
  sessionData: SessionDataCipher
  now: () => Date
  /** Days a session is kept after its expiry; 0 keeps sessions (claims are still dropped). */
  retentionDays: number
  /** Rows per statement, so one run never holds long locks. */
  batchSize?: number
}

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * One run of the retention job, for every tenant: drops the claims of offers that can no longer be
 * redeemed and same-device results nobody released an hour past expiry, encrypts claims and
 * results left in clear by an older version, then deletes sessions whose expiry lies more than
 * `retentionDays` back, and finished webhook deliveries (delivered or failed) last changed as long
 * ago, in batches until none is left. Several processes may run it at once: each batch changes or
 * deletes what is still there.
 */
export async function applySessionRetention(deps: SessionRetentionDeps) {
  const batch = deps.batchSize ?? 500
  const now = deps.now()
  let claimsDropped = 0
  for (let cleared = batch; cleared === batch; ) {
    cleared = await dropUnusableOfferClaims(deps.db, now, batch)
    claimsDropped += cleared
  }
  let resultsDropped = 0
  for (let cleared = batch; cleared === batch; ) {
    cleared = await dropUnreleasedResults(deps.db, now, batch)
    resultsDropped += cleared
  }
  const seal = {
    claims: deps.sessionData.sealClaims,
    result: deps.sessionData.sealResult,
  }
  let sealed = 0
  for (let more = true; more; ) {
    const done = await sealLegacySessionData(deps.db, seal, batch)
    sealed += done.issuance + done.presentation
    more = done.issuance === batch || done.presentation === batch
  }
  const deleted = { issuance: 0, presentation: 0, webhookDeliveries: 0 }
  if (deps.retentionDays > 0) {
    const before = new Date(now.getTime() - deps.retentionDays * DAY_MS)
    for (let more = true; more; ) {
      const purged = await purgeSessions(deps.db, before, batch)
      deleted.issuance += purged.issuance
      deleted.presentation += purged.presentation
      more = purged.issuance === batch || purged.presentation === batch
    }
    for (let purged = batch; purged === batch; ) {
      purged = await purgeWebhookDeliveries(deps.db, before, batch)
      deleted.webhookDeliveries += purged
    }
  }
  return { claimsDropped, resultsDropped, sealed, deleted }
}
