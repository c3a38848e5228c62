import { testDatabases } from '@credential-service/db-schema/testing'
import { createManagementClient } from '@credential-service/sdk'
import type { FastifyInstance } from 'fastify'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { bearer, startAllInOneWorld } from './harness'
import { issueOverHttp, presentOverHttp, redeemOffer } from './wallet'

const M = 'credential_service_'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?,?\\})? (\\S+)(?: -?\\d+)?$`)
const SUFFIXES: Record<string, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
}

/**
 * A checker of the Prometheus text format 0.0.4: every line is a HELP, a TYPE or a sample; every
 * sample belongs to the family typed just before it; a histogram's buckets carry `le` and end at
 * +Inf with the count. Throws at the first bad line.
 */
function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = []
  const typed = new Map<string, string>()
  let family: { name: string; type: string } | undefined
  for (const [index, line] of text.split('\n').entries()) {
    const where = `line ${index + 1}: ${line}`
    if (line === '') continue
    const comment = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line)
    if (comment) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string]
      if (!new RegExp(`^${NAME}$`).test(name)) throw new Error(`bad metric name, ${where}`)
      if (kind === 'TYPE') {
        if (!(rest in SUFFIXES) || typed.has(name)) throw new Error(`bad or repeated TYPE, ${where}`)
        typed.set(name, rest)
        family = { name, type: rest }
      }
      continue
    }
    if (line.startsWith('#')) continue
    const match = SAMPLE.exec(line)
    if (!match) throw new Error(`not a sample, ${where}`)
    const [, name, labelText, value] = match as unknown as [string, string, string | undefined, string]
    if (!family || !(SUFFIXES[family.type] ?? []).some((suffix) => `${family?.name}${suffix}` === name))
      throw new Error(`sample outside its family, ${where}`)
    const labels: Record<string, string> = {}
    for (const pair of (labelText ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      if ((pair[1] as string) in labels) throw new Error(`repeated label, ${where}`)
      labels[pair[1] as string] = (pair[2] as string).replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1')
    }
    if (name.endsWith('_bucket') && labels.le === undefined) throw new Error(`bucket without le, ${where}`)
    samples.push({ name, labels, value: sampleValue(value, where) })
  }
  return samples
}

/** A float as Prometheus reads it (Go's ParseFloat: `NaN`, `+Inf` in any case). */
function sampleValue(text: string, where: string): number {
  if (/^nan$/i.test(text)) return Number.NaN
  if (/^[+-]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) throw new Error(`bad value, ${where}`)
  return Number(text)
}

/** The value of the one sample of `name` whose labels include `labels`; 0 when there is none. */
function sampleOf(samples: Sample[], name: string, labels: Record<string, string>): number {
  const found = samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )
  expect(found.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1)
  return found[0]?.value ?? 0
}

describe.each(testDatabases())('GET /api/metrics on $name', (testDatabase) => {
  let app: FastifyInstance
  let baseUrl: string
  let root: Record<string, string>
  let operator: Record<string, string>
  let operatorClient: { clientId: string; clientSecret: string }
  let tenant: string
  let other: string
  const admins: Record<string, Record<string, string>> = {}
  /** Values that must never reach a label: session ids, codes, tokens, request ids, secrets. */
  const secrets: string[] = []

  const scrape = async (headers: Record<string, string> = operator) => {
    const response = await app.inject({ url: '/api/metrics', headers })
    expect(response.statusCode, response.body).toBe(200)
    return { text: response.body, samples: parsePrometheus(response.body), response }
  }

  const presentationRequest = async (id: string) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/presentation-requests',
      headers: admins[id] as Record<string, string>,
      payload: { presentationConfigId: 'ask' },
    })
    expect(response.statusCode, response.body).toBe(201)
    const created = response.json() as { sessionId: string; requestUri: string }
    secrets.push(created.sessionId, created.requestUri.split('/').at(-1) as string)
    return created
  }

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    // The `presentation` world (test/worlds/presentation): each tenant a `pid` and the `ask` for it.
    const started = await startAllInOneWorld(testDatabase, 'presentation', baseUrl)
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    root = started.root
    secrets.push(started.rootSecret)
    tenant = started.tenants.a.id
    other = started.tenants.b.id
    for (const world of [started.tenants.a, started.tenants.b]) {
      admins[world.id] = world.auth
      secrets.push(world.clients.admin?.clientSecret as string)
      secrets.push((world.auth.authorization as string).slice('Bearer '.length))
    }
    // Operator clients belong to no tenant, so no world holds one; they hold tenant:manage (roles.ts).
    const metricsClient = (
      await app.inject({
        method: 'POST',
        url: '/api/clients',
        headers: root,
        payload: { roles: ['tenant:manage', 'metrics:read'] },
      })
    ).json()
    operatorClient = metricsClient
    operator = await bearer(app, metricsClient.clientId, metricsClient.clientSecret)
    secrets.push(metricsClient.clientSecret)
  })
  afterAll(() => app.close())

  it('spec §5: 401 without a token, 403 without metrics:read (problem+json)', async () => {
    const anonymous = await app.inject({ url: '/api/metrics' })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.headers['content-type']).toMatch(/^application\/problem\+json/)
    const withoutRole = await app.inject({ url: '/api/metrics', headers: admins[tenant] })
    expect(withoutRole.statusCode).toBe(403)
    expect(withoutRole.json()).toMatchObject({ status: 403, code: 'forbidden' })
  })

  it('metrics: Prometheus text format 0.0.4 with process, database and HTTP families', async () => {
    const { response, samples, text } = await scrape()
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(text).toMatch(/^# TYPE process_cpu_user_seconds_total counter$/m)
    expect(text).toMatch(/^# TYPE nodejs_eventloop_lag_seconds gauge$/m)
    expect(sampleOf(samples, `${M}db_pool_max_connections`, {})).toBe(testDatabase.name === 'pglite' ? 1 : 4)
    expect(text).toMatch(new RegExp(`^# TYPE ${M}db_query_errors_total counter$`, 'm'))
    // The scrape itself was counted by the management app under its route template.
    const again = await scrape()
    expect(
      sampleOf(again.samples, `${M}http_requests_total`, {
        app: 'management',
        route: '/api/metrics',
        method: 'GET',
        status_class: '2xx',
      }),
    ).toBeGreaterThanOrEqual(1)
  })

  it('metrics: a real issuance counts the offer, the credential by format and the credential endpoint latency', async () => {
    const before = (await scrape()).samples
    const issued = await issueOverHttp({
      apiBase: baseUrl,
      auth: admins[tenant] as Record<string, string>,
      configurationId: 'pid',
      claims: { given_name: 'Erika', age_over_18: true },
      byReference: true,
    })
    secrets.push(issued.sessionId, issued.credential)
    const { samples, text } = await scrape()
    const delta = (name: string, labels: Record<string, string>) =>
      sampleOf(samples, name, labels) - sampleOf(before, name, labels)
    expect(delta(`${M}credential_offers_created_total`, { tenant })).toBe(1)
    expect(delta(`${M}credentials_issued_total`, { tenant, format: 'dc+sd-jwt' })).toBe(1)
    expect(delta(`${M}credentials_issued_total`, { tenant: other, format: 'dc+sd-jwt' })).toBe(0)
    const credentialRoute = { app: 'issuer', tenant, route: '/issuers/:tenant/credential', method: 'POST' }
    expect(delta(`${M}http_request_duration_seconds_count`, credentialRoute)).toBe(1)
    expect(
      sampleOf(samples, `${M}http_request_duration_seconds_bucket`, { ...credentialRoute, le: '+Inf' }),
    ).toBe(sampleOf(samples, `${M}http_request_duration_seconds_count`, credentialRoute))
    expect(sampleOf(samples, `${M}http_request_duration_seconds_sum`, credentialRoute)).toBeGreaterThan(0)
    // The offer by reference was fetched at /issuers/{tenant}/offers/{sessionId}: the template only.
    expect(
      delta(`${M}http_requests_total`, {
        app: 'issuer',
        tenant,
        route: '/issuers/:tenant/offers/:id',
        method: 'GET',
        status_class: '2xx',
      }),
    ).toBe(1)
    expect(text).not.toContain(issued.sessionId)
  })

  it('metrics: a 4xx of a protocol endpoint shows as an error of its route and tenant', async () => {
    const before = (await scrape()).samples
    const response = await fetch(`${baseUrl}/issuers/${tenant}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
        'pre-authorized_code': 'guessed-code-that-does-not-exist',
      }),
    })
    expect(response.status).toBe(400)
    secrets.push('guessed-code-that-does-not-exist')
    const { samples } = await scrape()
    const token = { app: 'issuer', tenant, route: '/issuers/:tenant/token', method: 'POST' }
    const delta = (name: string, labels: Record<string, string>) =>
      sampleOf(samples, name, labels) - sampleOf(before, name, labels)
    expect(delta(`${M}http_request_errors_total`, { ...token, status: '400' })).toBe(1)
    expect(delta(`${M}http_requests_total`, { ...token, status_class: '4xx' })).toBe(1)
  })

  it('metrics: presentations count as verified or failed per tenant', async () => {
    const before = (await scrape()).samples
    const wallet = await redeemOffer({
      credentialOffer: (
        await app.inject({
          method: 'POST',
          url: '/api/offers',
          headers: admins[other] as Record<string, string>,
          payload: {
            credentialConfigurationIds: ['pid'],
            claims: { pid: { given_name: 'Max', age_over_18: true } },
          },
        })
      ).json().credentialOffer,
      configurationId: 'pid',
    })
    const verified = await presentationRequest(other)
    const answer = await presentOverHttp({
      requestUri: verified.requestUri,
      credentialQueryId: 'pid',
      ...wallet,
      disclose: { age_over_18: true },
    })
    expect(answer.status).toBe(200)
    // OpenID4VP §8.5: the wallet declines; the session fails.
    const declined = await presentationRequest(other)
    const requestObject = decodeJwt(await (await fetch(declined.requestUri)).text()) as {
      state: string
      response_uri: string
    }
    const refusal = await fetch(requestObject.response_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ error: 'access_denied', state: requestObject.state }),
    })
    expect(refusal.status).toBe(200)
    const { samples, text } = await scrape()
    const delta = (name: string, labels: Record<string, string>) =>
      sampleOf(samples, name, labels) - sampleOf(before, name, labels)
    expect(delta(`${M}presentation_requests_created_total`, { tenant: other })).toBe(2)
    expect(delta(`${M}presentations_total`, { tenant: other, result: 'verified' })).toBe(1)
    expect(delta(`${M}presentations_total`, { tenant: other, result: 'failed' })).toBe(1)
    expect(
      delta(`${M}http_requests_total`, {
        app: 'verifier',
        tenant: other,
        route: '/verifiers/:tenant/responses/:requestId',
        method: 'POST',
        status_class: '2xx',
      }),
    ).toBe(2)
    for (const value of secrets) expect(text).not.toContain(value)
  })

  it('metrics: an unknown tenant in a wallet URL gets no label of its own', async () => {
    const bogus = `bogus-${crypto.randomUUID().slice(0, 8)}`
    const response = await app.inject({ url: `/.well-known/openid-credential-issuer/issuers/${bogus}` })
    expect(response.statusCode).toBe(404)
    const { text, samples } = await scrape()
    expect(text).not.toContain(bogus)
    expect(
      sampleOf(samples, `${M}http_request_errors_total`, {
        app: 'issuer',
        tenant: '_other',
        route: '/.well-known/openid-credential-issuer/issuers/:tenant',
        status: '404',
      }),
    ).toBeGreaterThanOrEqual(1)
  })

  it('metrics: a client bound to a tenant sees its own series only, not other tenants nor the process', async () => {
    const created = (
      await app.inject({
        method: 'POST',
        url: `/api/tenants/${tenant}/clients`,
        headers: root,
        payload: { roles: ['metrics:read'] },
      })
    ).json()
    secrets.push(created.clientSecret)
    const { text, samples } = await scrape(await bearer(app, created.clientId, created.clientSecret))
    expect(sampleOf(samples, `${M}credentials_issued_total`, { tenant, format: 'dc+sd-jwt' })).toBe(1)
    expect(text).not.toContain(other)
    expect(text).not.toContain('_other')
    expect(text).not.toContain('process_cpu')
    expect(text).not.toContain('db_pool')
    expect(samples.every((sample) => sample.labels.tenant === tenant)).toBe(true)
  })

  it('issue 13: the SDK’s getMetrics answers the exposition text as a string', async () => {
    const sdk = createManagementClient({ baseUrl, ...operatorClient })
    const text = await sdk.getMetrics()
    expect(typeof text).toBe('string')
    expect(parsePrometheus(text).some((sample) => sample.name === `${M}http_requests_total`)).toBe(true)
  })

  it('metrics: no session id, offer id, request id, code, token or secret appears in any label', async () => {
    const { text } = await scrape()
    expect(secrets.length).toBeGreaterThan(8)
    for (const value of secrets) expect(text).not.toContain(value)
  })
})
