import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServiceProcess, startDeployment, tenantAdmin } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL
// One deployment behind one ingress: both issuer processes publish the same issuer identifier.
const PUBLIC_URL = 'https://credentials.test'
const WALLET_ORIGIN = 'https://wallet.example'

/**
 * Issue 44: a wallet reads the issuer's metadata in every flow. It is served from memory with a
 * strong ETag that is a digest of the content, so two issuer processes give the same document the
 * same tag, a revalidation gets a 304 from either, and a change of the tenant's configuration
 * (dropping each process's cache through the tenant-changes notification) changes the tag on both.
 */
describe.runIf(databaseUrl)('metadata ETags across two issuer processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'metadata-etag-root-secret-0123456789' }
  const tenant = `me-${randomBytes(4).toString('hex')}`
  const processes: ServiceProcess[] = []
  let api: (path: string, body: unknown) => Promise<unknown>
  const documents = [
    `/.well-known/openid-credential-issuer/issuers/${tenant}`,
    `/.well-known/oauth-authorization-server/issuers/${tenant}`,
    `/.well-known/jwt-vc-issuer/issuers/${tenant}`,
    `/issuers/${tenant}/jwks`,
  ]
  const issuers = () => processes.slice(1)
  const get = (at: ServiceProcess, path: string, headers: Record<string, string> = {}) =>
    fetch(`${at.origin}${path}`, { headers })

  beforeAll(async () => {
    processes.push(
      // The second issuer answers browsers too: its Vary names Origin as well.
      ...(await startDeployment(
        databaseUrl as string,
        root,
        ['management', 'issuer', { app: 'issuer', env: { CORS_ORIGINS: WALLET_ORIGIN } }],
        {
          PUBLIC_URL,
          DATABASE_POOL_SIZE: '2',
        },
      )),
    )
    const management = processes[0] as ServiceProcess
    api = (await tenantAdmin(management.origin, root, tenant, ['key:manage', 'issuance:config'])).post
    await api('/key-chains', { source: 'generate', id: 'keys' })
    await api('/credentials', config('pid'))
  }, 120_000)

  afterAll(() => Promise.all(processes.map((p) => p.stop())))

  const config = (id: string) => ({
    id,
    config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
    keyChainId: 'keys',
    fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
  })

  /** The tag each issuer process gives `path` once both serve `expected` configurations (caches drop on NOTIFY). */
  async function tagsOnceBothSee(path: string, expected: string[]): Promise<string[]> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const answers = await Promise.all(issuers().map((at) => get(at, path)))
      const bodies = (await Promise.all(answers.map((a) => a.json()))) as {
        credential_configurations_supported: Record<string, unknown>
      }[]
      const ids = bodies.map((b) => Object.keys(b.credential_configurations_supported).sort().join())
      if (ids.every((seen) => seen === expected.join()))
        return answers.map((a) => a.headers.get('etag') as string)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`the issuer processes did not both serve ${expected.join()}`)
  }

  it('RFC 9110 §8.8.3, §13.1.2, §15.4.5 (I-01, I-14): a strong ETag, the same from both processes; If-None-Match gets a 304 with ETag and Cache-Control from either', async () => {
    // RFC 9110 §15.4.5: "The server generating a 304 response MUST generate any of the following
    // header fields that would have been sent in a 200 (OK) response to the same request:
    // Content-Location, Date, ETag, and Vary; Cache-Control and Expires".
    await tagsOnceBothSee(documents[0] as string, ['pid'])
    for (const path of documents) {
      const [first, second] = await Promise.all(issuers().map((at) => get(at, path)))
      expect(first?.status, path).toBe(200)
      const etag = first?.headers.get('etag') as string
      // §8.8.3: a strong tag has no W/ prefix.
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
      expect(second?.headers.get('etag'), `${path}: the same content, the same tag in every process`).toBe(
        etag,
      )
      const cacheControl = first?.headers.get('cache-control')
      expect(cacheControl, path).toMatch(/^public, /)
      for (const at of issuers()) {
        // §13.1.2: "the origin server MUST respond with ... the 304 (Not Modified) status code if
        // the request method is GET or HEAD"; the weak comparison also matches a W/ form of the tag.
        for (const ifNoneMatch of [etag, `"other", W/${etag}`]) {
          const revalidated = await get(at, path, { 'if-none-match': ifNoneMatch })
          expect(revalidated.status, path).toBe(304)
          expect(await revalidated.text()).toBe('')
          expect(revalidated.headers.get('etag')).toBe(etag)
          expect(revalidated.headers.get('cache-control')).toBe(cacheControl)
        }
        const stale = await get(at, path, { 'if-none-match': '"not-this-one"' })
        expect(stale.status, path).toBe(200)
      }
    }
    // The metadata answers JSON or, on Accept: application/jwt, a signed JWT (I-13): shared caches
    // must keep them apart, on the 304 too.
    const revalidated = await get(issuers()[0] as ServiceProcess, documents[0] as string, {
      'if-none-match': (await get(issuers()[0] as ServiceProcess, documents[0] as string)).headers.get(
        'etag',
      ) as string,
    })
    expect(revalidated.headers.get('vary')).toBe('Accept')
    const fromBrowser = await get(issuers()[1] as ServiceProcess, documents[0] as string, {
      origin: WALLET_ORIGIN,
    })
    expect(fromBrowser.headers.get('vary')?.split(/,\s*/).sort()).toStrictEqual(['Accept', 'Origin'])
  })

  it('I-13, RFC 9110 §8.8.1: the signed metadata (Accept: application/jwt) has a weak tag, the same from both processes, and a 304 from either', async () => {
    const path = documents[0] as string
    const signed = { accept: 'application/jwt' }
    const answers = await Promise.all(issuers().map((at) => get(at, path, signed)))
    for (const answer of answers) expect(answer.headers.get('content-type')).toMatch(/^application\/jwt/)
    const [first, second] = answers.map((answer) => answer.headers.get('etag') as string)
    // Each process signs anew (ECDSA): the bytes differ, the meaning does not, so the tag is weak.
    expect(first).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/)
    expect(second).toBe(first)
    for (const at of issuers()) {
      const revalidated = await get(at, path, { ...signed, 'if-none-match': first as string })
      expect(revalidated.status).toBe(304)
      expect(revalidated.headers.get('etag')).toBe(first)
    }
    const json = await get(issuers()[0] as ServiceProcess, path, { 'if-none-match': first as string })
    expect(json.status, 'the JSON is another representation with its own tag').toBe(200)
  })

  it('RFC 9110 §13.1.2: a configuration change changes the tag on both processes, and the old tag then gets the new document', async () => {
    const path = documents[0] as string
    const [before] = await tagsOnceBothSee(path, ['pid'])
    await api('/credentials', config('mdl-like'))
    const after = await tagsOnceBothSee(path, ['mdl-like', 'pid'])
    expect(after[0]).not.toBe(before)
    expect(after[1], 'both processes agree on the new tag').toBe(after[0])
    for (const at of issuers()) {
      const revalidated = await get(at, path, { 'if-none-match': before as string })
      expect(revalidated.status).toBe(200)
      const body = (await revalidated.json()) as { credential_configurations_supported: object }
      expect(Object.keys(body.credential_configurations_supported)).toContain('mdl-like')
    }
    // A new key chain changes the published keys, and so their tag.
    const jwks = documents[3] as string
    const keysBefore = (await get(issuers()[0] as ServiceProcess, jwks)).headers.get('etag')
    await api('/key-chains', { source: 'generate', id: 'spare' })
    let keysAfter = keysBefore
    for (let attempt = 0; attempt < 50 && keysAfter === keysBefore; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      keysAfter = (await get(issuers()[0] as ServiceProcess, jwks)).headers.get('etag')
    }
    expect(keysAfter).not.toBe(keysBefore)
    expect(
      (await get(issuers()[1] as ServiceProcess, jwks, { 'if-none-match': keysAfter as string })).status,
    ).toBe(304)
  })
})
