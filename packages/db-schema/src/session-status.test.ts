import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { checkViolation } from './repositories/errors'
import { createIssuanceSessionRepository } from './repositories/issuance'
import { createPresentationSessionRepository } from './repositories/presentation'
import {
  AUTHORIZATION_REQUEST_STATUSES,
  ISSUANCE_SESSION_STATUSES,
  PRESENTATION_SESSION_STATUSES,
} from './schema'
import { testDatabases } from './testing'

/** The CHECK constraint `attempt` trips, or the outcome when it succeeds or fails otherwise. */
const refusal = (attempt: Promise<unknown>) =>
  attempt.then(
    () => 'accepted',
    (error: unknown) => checkViolation(error) ?? error,
  )

describe.each(testDatabases())('session status columns on $name', ({ open }) => {
  it('the database refuses a status the code never writes; every stored one is accepted', async () => {
    const database = await open()
    const tenantId = `ss-${crypto.randomUUID()}`
    try {
      const { db } = database
      await db.execute(sql`insert into tenants (id, name) values (${tenantId}, 'x')`)
      const expiresAt = new Date(Date.now() + 60_000)
      const issuance = createIssuanceSessionRepository(db, tenantId)
      const presentation = createPresentationSessionRepository(db, tenantId)
      const offer = (id: string, status: string) =>
        issuance.insert({
          id,
          status,
          credentialConfigurationIds: ['pid'],
          preAuthorizedCodeHash: `code-${id}`,
          createdByClientId: 'cli_test',
          expiresAt,
        })
      const request = (id: string, status: string) =>
        presentation.insert({
          id,
          requestId: `req-${id}`,
          status,
          presentationConfigId: 'pid',
          clientId: 'x509_san_dns:verifier.example',
          nonce: 'n',
          state: 's',
          responseMode: 'direct_post.jwt',
          encryptionKey: 'k',
          encryptionKid: 'kid',
          createdByClientId: 'cli_test',
          expiresAt,
        })

      for (const status of ISSUANCE_SESSION_STATUSES)
        expect(await refusal(offer(`ses_${status}`, status))).toBe('accepted')
      for (const status of PRESENTATION_SESSION_STATUSES)
        expect(await refusal(request(`ses_${status}`, status))).toBe('accepted')

      // `expired` is read from `expires_at`, never stored; the other kind's statuses do not fit.
      for (const status of ['expired', 'pending', 'issued', ''])
        expect(await refusal(offer(`ses_bad_${status}`, status))).toBe('issuance_sessions_status_check')
      for (const status of ['expired', 'offered', 'completed'])
        expect(await refusal(request(`ses_bad_${status}`, status))).toBe('presentation_sessions_status_check')
      expect(
        await refusal(
          db.execute(
            sql`update issuance_sessions set status = 'revoked' where tenant_id = ${tenantId} and id = 'ses_offered'`,
          ),
        ),
      ).toBe('issuance_sessions_status_check')
      expect((await issuance.get('ses_offered'))?.status).toBe('offered')
    } finally {
      await database.db.execute(sql`delete from tenants where id = ${tenantId}`)
      await database.close()
    }
  })

  it('issue 21: an authorization request holds only the statuses of its flow', async () => {
    const database = await open()
    const tenantId = `as-${crypto.randomUUID()}`
    try {
      const { db } = database
      await db.execute(sql`insert into tenants (id, name) values (${tenantId}, 'x')`)
      const pushed = (id: string, status: string) =>
        db.execute(sql`
          insert into authorization_requests (tenant_id, id, status, request_uri_hash, client_id,
            redirect_uri, code_challenge, credential_configuration_ids, detail_configuration_ids, expires_at)
          values (${tenantId}, ${id}, ${status}, ${`h-${id}`}, 'wallet', 'https://wallet.example/cb', 'c',
            array['pid'], array[]::text[], now() + interval '1 minute')`)
      for (const status of AUTHORIZATION_REQUEST_STATUSES)
        expect(await refusal(pushed(`ar_${status}`, status))).toBe('accepted')
      for (const status of ['expired', 'offered', 'code', ''])
        expect(await refusal(pushed(`ar_bad_${status}`, status))).toBe('authorization_requests_status_check')
    } finally {
      await database.db.execute(sql`delete from tenants where id = ${tenantId}`)
      await database.close()
    }
  })
})
