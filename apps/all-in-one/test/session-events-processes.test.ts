import { randomBytes } from 'node:crypto'
import {
  createManagementClient,
  type ManagementClient,
  type ServerSentEvent,
  type Session,
} from '@credential-service/sdk'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServiceProcess, startDeployment } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL
const PUBLIC_URL = 'https://credentials.test'

/** Reads a stream to its end in the background. */
function follow(events: AsyncIterable<ServerSentEvent>) {
  const seen: ServerSentEvent[] = []
  const done = (async () => {
    for await (const event of events) seen.push(event)
  })()
  const opened = async () => {
    for (let n = 0; n < 100 && seen.length === 0; n++) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { seen, done, opened }
}

const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms),
    ),
  ])

/**
 * Issue 23 item 2: a session's status changes reach streams on every management process through
 * PostgreSQL LISTEN/NOTIFY, whichever process made them. Heartbeats (and their re-reads) are 300 s
 * apart, so an event that arrives within seconds came by NOTIFY.
 */
describe.runIf(databaseUrl)('live session events across processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'session-events-root-secret-0123456789' }
  const tenant = `se-${randomBytes(4).toString('hex')}`
  const issuerId = `${PUBLIC_URL}/issuers/${tenant}`
  const processes: ServiceProcess[] = []
  let streams: [ManagementClient, ManagementClient]
  let issuer: ServiceProcess

  beforeAll(async () => {
    processes.push(
      ...(await startDeployment(databaseUrl as string, root, ['management', 'management', 'issuer'], {
        PUBLIC_URL,
        SESSION_EVENTS_HEARTBEAT_SECONDS: '300',
      })),
    )
    const [one, two] = processes as [ServiceProcess, ServiceProcess, ServiceProcess]
    issuer = processes[2] as ServiceProcess
    const operator = createManagementClient({
      baseUrl: one.origin,
      clientId: root.id,
      clientSecret: root.secret,
    })
    await operator.createTenant({ id: tenant, name: tenant })
    const admin = await operator.createClientOfTenant(tenant, {
      roles: ['key:manage', 'issuance:config', 'issuance:offer'],
    })
    streams = [
      createManagementClient({
        baseUrl: one.origin,
        clientId: admin.clientId,
        clientSecret: admin.clientSecret,
      }),
      createManagementClient({
        baseUrl: two.origin,
        clientId: admin.clientId,
        clientSecret: admin.clientSecret,
      }),
    ]
    await streams[0].createKeyChain({ source: 'generate', id: 'keys' })
    await streams[0].createCredentialConfig({
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:pid' },
      keyChainId: 'keys',
      fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
    })
  }, 120_000)

  afterAll(() => Promise.all(processes.map((p) => p.stop())))

  /** The wallet's token and credential requests, at the issuer process. */
  async function redeem(credentialOffer: Record<string, unknown>) {
    // biome-ignore lint/suspicious/noExplicitAny: the offer is read loosely
    const grants = (credentialOffer as any).grants
    const code = grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code']
    const token = await fetch(`${issuer.origin}/issuers/${tenant}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
        'pre-authorized_code': code,
      }),
    })
    const { access_token } = (await token.json()) as { access_token: string }
    const nonce = await fetch(`${issuer.origin}/issuers/${tenant}/nonce`, { method: 'POST' })
    const { c_nonce } = (await nonce.json()) as { c_nonce: string }
    const key = await generateKeyPair('ES256')
    const proof = await new SignJWT({ nonce: c_nonce })
      .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(key.publicKey) })
      .setAudience(issuerId)
      .setIssuedAt()
      .sign(key.privateKey)
    const credential = await fetch(`${issuer.origin}/issuers/${tenant}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ credential_configuration_id: 'pid', proofs: { jwt: [proof] } }),
    })
    expect(credential.status).toBe(200)
  }

  it('the issuer process issues, and streams on both management processes see each change within seconds', async () => {
    const offer = await streams[0].createOffer({
      credentialConfigurationIds: ['pid'],
      claims: { pid: { given_name: 'Erika' } },
    })
    const followers = streams.map((api) => follow(api.streamSessionEvents(offer.sessionId)))
    await Promise.all(followers.map((f) => f.opened()))
    await redeem(offer.credentialOffer as Record<string, unknown>)
    await within(Promise.all(followers.map((f) => f.done)), 10_000, 'both streams ending')
    for (const { seen } of followers) {
      const statuses = seen.map((event) => (JSON.parse(event.data) as Session).status)
      expect(statuses[0]).toBe('offered')
      expect(statuses.at(-1)).toBe('completed')
    }
  }, 30_000)

  it('a deletion through one management process ends the stream on the other', async () => {
    const offer = await streams[0].createOffer({
      credentialConfigurationIds: ['pid'],
      claims: { pid: { given_name: 'Erika' } },
    })
    const stream = follow(streams[0].streamSessionEvents(offer.sessionId))
    await stream.opened()
    await streams[1].deleteSession(offer.sessionId)
    await within(stream.done, 10_000, 'the stream ending')
    expect(stream.seen.map((event) => event.event)).toStrictEqual(['session', 'deleted'])
  }, 30_000)
})
