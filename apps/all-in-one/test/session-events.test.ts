import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  createManagementClient,
  ManagementApiError,
  type ManagementClient,
  requestClientCredentialsToken,
  type ServerSentEvent,
  type Session,
} from '@credential-service/sdk'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOne } from './harness'
import { redeemOffer } from './wallet'

/** Events of a stream as they come, with a way to wait for the next ones and to stop. */
function collect(events: AsyncIterable<ServerSentEvent>) {
  const seen: ServerSentEvent[] = []
  let wake: (() => void) | undefined
  const done = (async () => {
    for await (const event of events) {
      seen.push(event)
      wake?.()
    }
    wake?.()
  })()
  return {
    seen,
    done,
    sessions: () => seen.filter((e) => e.event === 'session').map((e) => JSON.parse(e.data) as Session),
    /** Resolves once `count` events arrived (or the stream ended), within `ms`. */
    async atLeast(count: number, ms = 10_000) {
      const until = Date.now() + ms
      let ended = false
      void done.then(() => {
        ended = true
      })
      while (seen.length < count && !ended && Date.now() < until)
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 100)
        })
      return seen
    },
  }
}

describe.each(testDatabases())(
  'live session events, GET /api/sessions/{id}/events (issue 23 item 2) on $name',
  (testDatabase: TestDatabase) => {
    let app: FastifyInstance
    let baseUrl: string
    let api: ManagementClient
    let presenter: ManagementClient
    let admin: { clientId: string; clientSecret: string }
    const adminToken = async () =>
      (await requestClientCredentialsToken({ tokenUrl: `${baseUrl}/api/oauth2/token`, ...admin }))
        .access_token

    beforeAll(async () => {
      const port = await freePort()
      baseUrl = `http://127.0.0.1:${port}`
      const started = await startAllInOne(testDatabase, baseUrl, {
        // Heartbeats (and their re-reads) every 2 s; a change that arrives sooner came by NOTIFY.
        SESSION_EVENTS_HEARTBEAT_SECONDS: '2',
        RATE_LIMIT_WALLET_PER_MINUTE: '100000',
      })
      app = started.app
      await app.listen({ host: '127.0.0.1', port })
      const root = createManagementClient({
        baseUrl,
        clientId: started.rootClientId,
        clientSecret: started.rootSecret,
      })
      const tenant = (await root.createTenant({ name: 'Session events' })).id
      admin = await root.createClientOfTenant(tenant, {
        roles: ['key:manage', 'issuance:config', 'issuance:offer'],
      })
      api = createManagementClient({ baseUrl, clientId: admin.clientId, clientSecret: admin.clientSecret })
      const other = await root.createClientOfTenant(tenant, { roles: ['presentation:request'] })
      presenter = createManagementClient({
        baseUrl,
        clientId: other.clientId,
        clientSecret: other.clientSecret,
      })
      await api.createKeyChain({ source: 'generate', id: 'keys' })
      await api.createCredentialConfig({
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: 'urn:example:pid' },
        keyChainId: 'keys',
        fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
      })
    }, 60_000)
    afterAll(() => app.close())

    const offer = () =>
      api.createOffer({ credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'Erika' } } })
    const redeem = async (created: Awaited<ReturnType<typeof offer>>) =>
      redeemOffer({
        credentialOffer: created.credentialOffer as Record<string, unknown>,
        configurationId: 'pid',
      })

    it('sends the session at once, each status change as it happens, and ends after the final status', async () => {
      const created = await offer()
      const stream = collect(api.streamSessionEvents(created.sessionId))
      await stream.atLeast(1)
      expect(stream.sessions().map((s) => s.status)).toStrictEqual(['offered'])
      const started = Date.now()
      await redeem(created)
      await stream.done
      const statuses = stream.sessions().map((s) => s.status)
      expect(statuses[0]).toBe('offered')
      expect(statuses.at(-1)).toBe('completed')
      // Each event carries the session as GET answers it, with an id for resuming.
      expect(stream.sessions().at(-1)).toStrictEqual(await api.getSession(created.sessionId))
      for (const event of stream.seen)
        expect(event.id).toMatch(/^\d+\.(offered|token_issued|credential_issued|completed)$/)
      expect(new Set(stream.seen.map((e) => e.id)).size).toBe(stream.seen.length)
      expect(Date.now() - started).toBeLessThan(10_000)
    })

    it('resumes with Last-Event-ID: the state the client has is not sent again, the next change is', async () => {
      const created = await offer()
      const first = collect(api.streamSessionEvents(created.sessionId))
      const [opened] = await first.atLeast(1)
      const controller = new AbortController()
      const resumed = collect(
        api.streamSessionEvents(created.sessionId, {
          lastEventId: opened?.id as string,
          signal: controller.signal,
        }),
      )
      // Two heartbeats with no change: nothing but keep-alives (which are no events).
      await new Promise((resolve) => setTimeout(resolve, 4500))
      expect(resumed.seen).toStrictEqual([])
      await redeem(created)
      await first.done
      await resumed.done
      expect(resumed.sessions().at(-1)?.status).toBe('completed')
      expect(resumed.seen.map((e) => e.id)).not.toContain(opened?.id)
      // A stale id gets the current state at once.
      const late = collect(api.streamSessionEvents(created.sessionId, { lastEventId: opened?.id as string }))
      await late.done
      expect(late.sessions().map((s) => s.status)).toStrictEqual(['completed'])
      controller.abort()
    }, 30_000)

    it('keeps the connection alive with a comment every SESSION_EVENTS_HEARTBEAT_SECONDS', async () => {
      const created = await offer()
      const controller = new AbortController()
      const response = await fetch(`${baseUrl}/api/sessions/${created.sessionId}/events`, {
        headers: { authorization: `Bearer ${await adminToken()}` },
        signal: controller.signal,
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      expect(response.headers.get('cache-control')).toBe('no-store')
      expect(response.headers.get('x-accel-buffering')).toBe('no')
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      let text = ''
      const until = Date.now() + 6000
      while (!text.includes(': keep-alive') && Date.now() < until)
        text += new TextDecoder().decode((await reader.read()).value)
      controller.abort()
      expect(text).toMatch(
        /^retry: 2000\n\nid: \d+\.offered\nevent: session\ndata: \{.*\}\n\n: keep-alive\n\n/,
      )
    })

    it('ends with `event: deleted` when the session is deleted', async () => {
      const created = await offer()
      const stream = collect(api.streamSessionEvents(created.sessionId))
      await stream.atLeast(1)
      await api.deleteSession(created.sessionId)
      await stream.done
      expect(stream.seen.map((e) => e.event)).toStrictEqual(['session', 'deleted'])
      expect(JSON.parse(stream.seen[1]?.data as string)).toStrictEqual({ id: created.sessionId })
    })

    it('answers problems as JSON before any stream: an unknown session 404, a kind the roles do not cover 403', async () => {
      const unknown = await first(api.streamSessionEvents('ses_unknown')).catch((e: unknown) => e)
      expect(unknown).toBeInstanceOf(ManagementApiError)
      expect(unknown).toMatchObject({ status: 404, code: 'not_found' })
      const created = await offer()
      const forbidden = await first(presenter.streamSessionEvents(created.sessionId)).catch((e: unknown) => e)
      expect(forbidden).toMatchObject({ status: 403 })
    })

    it('SDK: waitForSession follows the stream (a poll interval of a minute is never waited)', async () => {
      const created = await offer()
      const waiting = api.waitForSession(created.sessionId, { until: 'completed', intervalMs: 60_000 })
      await new Promise((resolve) => setTimeout(resolve, 300))
      const started = Date.now()
      await redeem(created)
      const session = await waiting
      expect(session.status).toBe('completed')
      expect(Date.now() - started).toBeLessThan(10_000)
    })

    it('SDK: waitForSession polls when the stream is not there (an older server)', async () => {
      const requests: string[] = []
      const old = createManagementClient({
        baseUrl,
        accessToken: adminToken,
        fetch: (input, init) => {
          requests.push(new URL(String(input)).pathname)
          if (String(input).endsWith('/events'))
            return Promise.resolve(
              new Response(JSON.stringify({ type: 'about:blank', status: 404, code: 'not_found' }), {
                status: 404,
                headers: { 'content-type': 'application/problem+json' },
              }),
            )
          return fetch(input, init)
        },
      })
      const created = await offer()
      const waiting = old.waitForSession(created.sessionId, { until: 'completed', intervalMs: 200 })
      await redeem(created)
      expect((await waiting).status).toBe('completed')
      expect(requests[0]).toBe(`/api/sessions/${created.sessionId}/events`)
      expect(requests.filter((path) => path === `/api/sessions/${created.sessionId}`).length).toBeGreaterThan(
        0,
      )
    })
  },
)

async function first(events: AsyncIterable<ServerSentEvent>): Promise<ServerSentEvent | undefined> {
  for await (const event of events) return event
  return undefined
}
