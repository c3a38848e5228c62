import { deriveManagementSigningKey } from '@credential-service/crypto'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  createManagementClient,
  ManagementApiError,
  type ManagementClient,
  readEventStream,
  requestClientCredentialsToken,
  type ServerSentEvent,
  type Session,
} from '@credential-service/sdk'
import { registerManagementTokens } from '@credential-service/server-kit'
import Fastify, { type FastifyInstance } from 'fastify'
import { decodeJwt } from 'jose'
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

    /** An access token of the admin client (its tenant and generation) that lives `seconds`. */
    async function shortLivedToken(seconds: number): Promise<string> {
      const claims = decodeJwt(await adminToken())
      const key = await deriveManagementSigningKey(TEST_MASTER_SECRET)
      const { issue } = await registerManagementTokens(Fastify(), {
        key,
        issuer: `${baseUrl}/api`,
        lifetimeSeconds: seconds,
      })
      const { accessToken } = await issue({
        clientId: admin.clientId,
        tenantId: claims.sub,
        tenantGeneration: claims.tenant_generation as string,
        roles: claims.roles as never,
      })
      return accessToken
    }
    const eventsOf = (sessionId: string, token: string, lastEventId?: string) =>
      fetch(`${baseUrl}/api/sessions/${sessionId}/events`, {
        headers: {
          authorization: `Bearer ${token}`,
          ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
        },
      })

    it('issue 36: the stream ends at its access token’s exp with `event: token-expired`, nothing after; a resume is authorised again', async () => {
      const created = await offer()
      const token = await shortLivedToken(3)
      const expiresAt = (decodeJwt(token).exp as number) * 1000
      const response = await eventsOf(created.sessionId, token)
      expect(response.status).toBe(200)
      const stream = collect(readEventStream(response.body as ReadableStream<Uint8Array>))
      await stream.done
      const endedAt = Date.now()
      expect(stream.seen.map((e) => e.event)).toStrictEqual(['session', 'token-expired'])
      expect(JSON.parse(stream.seen[1]?.data as string)).toStrictEqual({
        expiredAt: new Date(expiresAt).toISOString(),
      })
      // At the token's expiry: not before, and not long after on a loaded machine.
      expect(endedAt).toBeGreaterThanOrEqual(expiresAt - 20)
      expect(endedAt).toBeLessThan(expiresAt + 2000)
      // The session changes after the expiry; the expired token cannot resume the stream.
      await redeem(created)
      const lastEventId = stream.seen[0]?.id as string
      const refused = await eventsOf(created.sessionId, token, lastEventId)
      expect(refused.status).toBe(401)
      await refused.body?.cancel()
      const resumed = await eventsOf(created.sessionId, await adminToken(), lastEventId)
      const rest = collect(readEventStream(resumed.body as ReadableStream<Uint8Array>))
      await rest.done
      expect(rest.sessions().map((s) => s.status)).toStrictEqual(['completed'])
    }, 30_000)

    it('issue 36, SDK: a stream whose token expires goes on with a fresh token and Last-Event-ID; the caller sees every change once, no token-expired', async () => {
      const expiries: number[] = []
      const sdk = createManagementClient({
        baseUrl,
        accessToken: async () => {
          const token = await shortLivedToken(3)
          expiries.push((decodeJwt(token).exp as number) * 1000)
          return token
        },
      })
      const created = await offer()
      const stream = collect(sdk.streamSessionEvents(created.sessionId))
      await stream.atLeast(1)
      // Past the first token's expiry: the SDK is on its second stream.
      await new Promise((resolve) => setTimeout(resolve, (expiries[0] as number) + 500 - Date.now()))
      expect(expiries.length).toBeGreaterThanOrEqual(2)
      await redeem(created)
      await stream.done
      expect(new Set(stream.seen.map((e) => e.event))).toStrictEqual(new Set(['session']))
      const statuses = stream.sessions().map((s) => s.status)
      expect(statuses[0]).toBe('offered')
      expect(statuses.filter((status) => status === 'offered')).toHaveLength(1)
      expect(statuses.at(-1)).toBe('completed')
    }, 30_000)

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
