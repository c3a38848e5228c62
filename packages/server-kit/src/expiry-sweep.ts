import type { IssuanceExpiredEventBody, PresentationStatusEventBody } from '@credential-service/core-domain'
import {
  claimExpiredOffers,
  claimExpiredRequests,
  type Database,
  type Executor,
  enqueueWebhookDelivery,
  type NewWebhookDelivery,
} from '@credential-service/db-schema'
import type { WebhookEvent } from './webhook-event'

const BATCH = 100

export interface ExpirySweepOptions {
  db: Database
  seal: (event: WebhookEvent) => NewWebhookDelivery
  now: () => Date
  /** Lifetime of an access token: a redeemed offer is abandoned once its token expired too. */
  tokenSeconds: number
}

/**
 * Reports sessions that expired unanswered: `issuance.expired` for offers never redeemed or
 * redeemed and abandoned (`stage`),
 * `presentation.status` `expired` for requests never answered. Each batch claims its sessions and
 * stores their events in one transaction, so an expiry is reported exactly once however many
 * processes sweep (the claim is a conditional update; a rolled back batch is claimed again later).
 * Returns the ids of the deliveries it stored, for a kick.
 */
export async function sweepExpiredSessions(options: ExpirySweepOptions): Promise<string[]> {
  const stored: string[] = []
  for (const sweep of [sweepOffers, sweepRequests]) {
    let claimed = BATCH
    while (claimed === BATCH) {
      const batch = await sweep(options)
      claimed = batch.claimed
      stored.push(...batch.stored)
    }
  }
  return stored
}

type Batch = { claimed: number; stored: string[] }

async function storeAll(options: ExpirySweepOptions, tx: Executor, events: WebhookEvent[]) {
  const stored: string[] = []
  for (const event of events) {
    const delivery = options.seal(event)
    if (await enqueueWebhookDelivery(tx, delivery)) stored.push(delivery.id)
  }
  return stored
}

function sweepOffers(options: ExpirySweepOptions): Promise<Batch> {
  const now = options.now()
  return options.db.transaction(async (tx) => {
    const { claimed, offers } = await claimExpiredOffers(tx, now, BATCH, options.tokenSeconds)
    const events = offers.map((offer): WebhookEvent => {
      const body: IssuanceExpiredEventBody = {
        type: 'issuance.expired',
        tenantId: offer.tenantId,
        sessionId: offer.sessionId,
        credentialConfigurationIds: offer.configurationIds,
        stage: offer.stage,
        expiresAt: offer.expiresAt.toISOString(),
        at: now.toISOString(),
      }
      return {
        tenantId: offer.tenantId,
        endpointId: offer.endpointId,
        type: body.type,
        sessionId: offer.sessionId,
        body,
        dedupeKey: `${body.type}:${offer.sessionId}`,
      }
    })
    return { claimed, stored: await storeAll(options, tx, events) }
  })
}

function sweepRequests(options: ExpirySweepOptions): Promise<Batch> {
  const now = options.now()
  return options.db.transaction(async (tx) => {
    const { claimed, requests } = await claimExpiredRequests(tx, now, BATCH)
    const events = requests.map((request): WebhookEvent => {
      const body: PresentationStatusEventBody = {
        type: 'presentation.status',
        tenantId: request.tenantId,
        sessionId: request.sessionId,
        presentationConfigId: request.presentationConfigId,
        status: 'expired',
        at: now.toISOString(),
      }
      return {
        tenantId: request.tenantId,
        endpointId: request.endpointId,
        type: body.type,
        sessionId: request.sessionId,
        body,
        dedupeKey: `${body.type}:${request.sessionId}:expired`,
      }
    })
    return { claimed, stored: await storeAll(options, tx, events) }
  })
}
