import { createSessionDataCipher } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { queryRows, TEST_MASTER_SECRET, testDatabases } from '@credential-service/db-schema/testing'
import { applySessionRetention } from '@credential-service/management'
import type { WorldTenantHandle } from '@credential-service/management/testing'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllInOneWorld } from './harness'
import { answer, issue, redeem, requestPresentation } from './session-fixtures'

type Headers = Record<string, string>
const PUBLIC_URL = 'https://credentials.example.com'
const REDIRECT = 'https://rp.example.com/done'
/** A claim value nothing else in a row could contain by chance. */
const distinctive = () => `Quenby-${crypto.randomUUID()}`
/** The disclosed values of an SD-JWT VC, decoded (each disclosure is base64url JSON). */
const disclosed = (credential: string) =>
  credential
    .split('~')
    .slice(1)
    .filter(Boolean)
    .map((part) => Buffer.from(part, 'base64url').toString('utf8'))
    .join(' ')

// Issue 14: offer claims and presentation results encrypted at rest (AES-256-GCM, key from
// MASTER_SECRET, bound to tenant and session), dropped when no longer needed; legacy clear rows
// are read and then sealed by the retention job.
describe.each(testDatabases())('session data at rest on $name', (testDatabase) => {
  let app: FastifyInstance
  let database: DatabaseHandle
  let rp: WorldTenantHandle
  let other: WorldTenantHandle
  const logLines: string[] = []
  let rpId = ''
  let otherId = ''

  beforeAll(async () => {
    const started = await startAllInOneWorld(
      testDatabase,
      'presentation',
      PUBLIC_URL,
      {},
      undefined,
      logLines,
    )
    app = started.app
    database = started.database
    await app.ready()
    rp = started.tenants.a
    rpId = rp.id
    other = started.tenants.b
    otherId = other.id
  }, 120_000)
  afterAll(() => app.close())

  /** The whole stored row as text, as someone reading the database (or a dump) sees it. */
  const rowText = async (
    table: 'issuance_sessions' | 'presentation_sessions',
    tenant: string,
    id: string,
  ) => {
    const [row] = await queryRows<{ text: string }>(
      database.db,
      sql`select row_to_json(s)::text as text from ${sql.raw(table)} s where tenant_id = ${tenant} and id = ${id}`,
    )
    expect(row, `${table} ${id}`).toBeDefined()
    return row?.text as string
  }
  const offer = async (auth: Headers, claims: Record<string, unknown>) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: auth,
      payload: { credentialConfigurationIds: ['pid'], claims: { pid: claims }, byReference: false },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json() as { sessionId: string; credentialOffer: Record<string, unknown> }
  }
  const getSession = (id: string, auth: Headers = rp.auth) =>
    app.inject({ url: `/api/sessions/${id}`, headers: auth })
  /** A presentation of `ask` answered with a credential whose given_name is `name`, disclosed. */
  const presented = async (name: string, extra: object = {}, auth = rp.auth) => {
    const presentation = await requestPresentation(app, auth, extra)
    const issued = await issue(app, auth, { given_name: name, age_over_18: true })
    const response = await answer(app, presentation, issued, { given_name: true, age_over_18: true })
    expect(response.statusCode, response.body).toBe(200)
    return { sessionId: presentation.created.sessionId as string, response: response.json() }
  }

  it('issue 14: an offer’s claims are stored encrypted (no claim value in the row); the wallet still gets them', async () => {
    const name = distinctive()
    const created = await offer(rp.auth, { given_name: name, age_over_18: true })
    const stored = await rowText('issuance_sessions', rpId, created.sessionId)
    expect(stored).not.toContain(name)
    expect(stored).not.toContain('given_name')
    expect(stored).toMatch(/"claims_encrypted":"v1\.[\w-]+\.[\w-]+\.[\w-]+"/)

    const { response } = await (await redeem(app, created.credentialOffer)).credential()
    expect(response.statusCode, response.body).toBe(200)
    expect(disclosed(response.json().credentials[0].credential)).toContain(name)
    // Completed: the claims are gone, not only encrypted.
    expect(await rowText('issuance_sessions', rpId, created.sessionId)).toContain('"claims_encrypted":null')
  })

  it('issue 14: a presentation result is stored encrypted; GET /api/sessions/{id} shows it decrypted', async () => {
    const name = distinctive()
    const { sessionId } = await presented(name)
    const stored = await rowText('presentation_sessions', rpId, sessionId)
    expect(stored).not.toContain(name)
    expect(stored).toMatch(/"result_encrypted":"v1\./)
    const session = await getSession(sessionId)
    expect(session.statusCode, session.body).toBe(200)
    expect(session.json().claims.pid[0]).toMatchObject({ given_name: name, age_over_18: true })
  })

  it('issue 14, S-86: a same-device result is stored encrypted and dropped once released with the response code', async () => {
    const name = distinctive()
    const { sessionId, response } = await presented(name, { redirectUri: REDIRECT })
    const code = new URLSearchParams(new URL(response.redirect_uri).hash.slice(1)).get('response_code')
    expect(await rowText('presentation_sessions', rpId, sessionId)).not.toContain(name)
    const released = await app.inject({
      method: 'POST',
      url: `/api/sessions/${sessionId}/result`,
      headers: rp.auth,
      payload: { responseCode: code },
    })
    expect(released.statusCode, released.body).toBe(200)
    expect(released.json().claims.pid[0]).toMatchObject({ given_name: name })
    expect(await rowText('presentation_sessions', rpId, sessionId)).toContain('"result_encrypted":null')
  })

  it('issue 14, S-86: a same-device result nobody released an hour past expiry is dropped by the retention job; others stay', async () => {
    const codeOf = (response: { redirect_uri: string }) =>
      new URLSearchParams(new URL(response.redirect_uri).hash.slice(1)).get('response_code')
    const late = await presented(distinctive(), { redirectUri: REDIRECT })
    const recent = await presented(distinctive(), { redirectUri: REDIRECT })
    const crossDevice = await presented(distinctive())
    const expiredAgo = async (sessionId: string, minutes: number) =>
      queryRows(
        database.db,
        sql`update presentation_sessions set expires_at = now() - make_interval(mins => ${minutes}) where tenant_id = ${rpId} and id = ${sessionId}`,
      )
    await expiredAgo(late.sessionId, 61)
    await expiredAgo(recent.sessionId, 50)
    await expiredAgo(crossDevice.sessionId, 61)
    const run = await applySessionRetention({
      db: database.db,
      sessionData: createSessionDataCipher(TEST_MASTER_SECRET),
      now: () => new Date(),
      retentionDays: 0,
    })
    expect(run.resultsDropped).toBeGreaterThanOrEqual(1)
    expect(await rowText('presentation_sessions', rpId, late.sessionId)).toContain('"result_encrypted":null')
    const release = (sessionId: string, responseCode: string | null) =>
      app.inject({
        method: 'POST',
        url: `/api/sessions/${sessionId}/result`,
        headers: rp.auth,
        payload: { responseCode },
      })
    const dropped = await release(late.sessionId, codeOf(late.response))
    expect(dropped.statusCode).toBe(403)
    expect(dropped.json().code).toBe('forbidden')
    expect((await release(recent.sessionId, codeOf(recent.response))).statusCode).toBe(200)
    // A cross-device result stays with its session until SESSION_RETENTION_DAYS.
    expect((await getSession(crossDevice.sessionId)).json().claims.pid).toHaveLength(1)
  })

  it('issue 14: a ciphertext moved to another session or tenant does not decrypt: a 500 of its own code (stored_data_unreadable / server_error) logged at error, never the other row’s data', async () => {
    // Offer claims copied from one session to another of the same tenant.
    const first = distinctive()
    const source = await offer(rp.auth, { given_name: first, age_over_18: true })
    const target = await offer(rp.auth, { given_name: distinctive(), age_over_18: true })
    await queryRows(
      database.db,
      sql`update issuance_sessions set claims_encrypted = (select claims_encrypted from issuance_sessions where tenant_id = ${rpId} and id = ${source.sessionId}) where tenant_id = ${rpId} and id = ${target.sessionId}`,
    )
    const { response } = await (await redeem(app, target.credentialOffer)).credential()
    expect(response.statusCode).toBe(500)
    expect(response.json()).toStrictEqual({
      error: 'server_error',
      error_description:
        'data stored for this request cannot be decrypted; the operator has the details in the logs',
    })
    expect(response.body).not.toContain(first)
    expect(logLines.join('\n')).toContain(
      `cannot decrypt the offer claims of session [\\"${rpId}\\",\\"${target.sessionId}\\"]: wrong MASTER_SECRET or tampered data`,
    )

    // A presentation result copied into another tenant's session.
    const name = distinctive()
    const { sessionId } = await presented(name)
    const { sessionId: foreign } = await presented(distinctive(), {}, other.auth)
    await queryRows(
      database.db,
      sql`update presentation_sessions set result_encrypted = (select result_encrypted from presentation_sessions where tenant_id = ${rpId} and id = ${sessionId}) where tenant_id = ${otherId} and id = ${foreign}`,
    )
    const read = await getSession(foreign, other.auth)
    expect(read.statusCode).toBe(500)
    expect(read.json()).toMatchObject({ status: 500, code: 'stored_data_unreadable' })
    expect(read.body).not.toContain(name)
    expect(logLines.join('\n')).toContain(
      `cannot decrypt the presentation result of session [\\"${otherId}\\",\\"${foreign}\\"]`,
    )
  })

  it('issue 14 upgrade: clear rows written before 0007 are read as they are, then sealed by the retention job', async () => {
    const legacy = { before: distinctive(), after: distinctive(), result: distinctive() }
    // Rows as the previous version wrote them: claims and result in clear, nothing encrypted.
    const asLegacyOffer = async (name: string) => {
      const created = await offer(rp.auth, { given_name: 'overwritten', age_over_18: true })
      const claims = JSON.stringify({ pid: { given_name: name, age_over_18: true } })
      await queryRows(
        database.db,
        sql`update issuance_sessions set claims = ${claims}::jsonb, claims_encrypted = null where tenant_id = ${rpId} and id = ${created.sessionId}`,
      )
      return created
    }
    const redeemedBefore = await asLegacyOffer(legacy.before)
    const redeemedAfter = await asLegacyOffer(legacy.after)
    const { sessionId } = await presented(distinctive())
    const result = JSON.stringify({ pid: [{ given_name: legacy.result }] })
    await queryRows(
      database.db,
      sql`update presentation_sessions set result = ${result}::jsonb, result_encrypted = null where tenant_id = ${rpId} and id = ${sessionId}`,
    )

    // Dual read: a legacy offer issues its clear claims, a legacy result is shown.
    const before = (await (await redeem(app, redeemedBefore.credentialOffer)).credential()).response
    expect(before.statusCode, before.body).toBe(200)
    expect(disclosed(before.json().credentials[0].credential)).toContain(legacy.before)
    expect((await getSession(sessionId)).json().claims).toStrictEqual({
      pid: [{ given_name: legacy.result }],
    })

    // The management process's retention job seals what is left in clear (here: run once).
    const run = await applySessionRetention({
      db: database.db,
      sessionData: createSessionDataCipher(TEST_MASTER_SECRET),
      now: () => new Date(),
      retentionDays: 0,
    })
    expect(run.sealed).toBeGreaterThanOrEqual(2)
    const offerRow = await rowText('issuance_sessions', rpId, redeemedAfter.sessionId)
    expect(offerRow).not.toContain(legacy.after)
    expect(offerRow).toContain('"claims":null')
    expect(offerRow).toMatch(/"claims_encrypted":"v1\./)
    const resultRow = await rowText('presentation_sessions', rpId, sessionId)
    expect(resultRow).not.toContain(legacy.result)
    expect(resultRow).toContain('"result":null')

    // Sealed rows read as before.
    const after = (await (await redeem(app, redeemedAfter.credentialOffer)).credential()).response
    expect(after.statusCode, after.body).toBe(200)
    expect(disclosed(after.json().credentials[0].credential)).toContain(legacy.after)
    expect((await getSession(sessionId)).json().claims).toStrictEqual({
      pid: [{ given_name: legacy.result }],
    })
  })
})
