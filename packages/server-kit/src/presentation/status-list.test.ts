import { createPrivateKey, X509Certificate } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deflateSync } from 'node:zlib'
import { UpstreamUnavailableError } from '@credential-service/core-domain'
import {
  createCertificate,
  generateKeyPair,
  MAX_STATUS_LIST_BYTES,
  PresentationRejected,
  type Signer,
  signJws,
  signStatusListCwt,
  signWithKeyObject,
} from '@credential-service/crypto'
import { statusListChanged } from '@credential-service/db-schema'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createStatusLists,
  forgetOwnListsOnChange,
  requireValidEntry,
  type StatusCheck,
  type StatusLists,
} from './status-list'
import { STATUS_UNAVAILABLE, STATUS_UNCHECKED } from './status-list-fetch'

/** Options of one served list: its token's claims and the headers it is answered with. */
interface Served {
  bits?: number
  ttl?: number
  /** Seconds from now; 600 unless set. */
  exp?: number
  headers?: Record<string, string>
  /** The token's `sub`; the URI it is served at unless set. */
  sub?: string
}

/**
 * An issuer CA and its leaf, and a local server that serves the list tokens put in `lists`,
 * counts the requests per path, answers 304 to a matching If-None-Match and can go down.
 */
async function listIssuer() {
  const ca = await generateKeyPair('ES256')
  const caPem = await createCertificate({
    subjectPublicJwk: ca.publicJwk,
    issuerPrivateJwk: ca.privateJwk,
    subject: 'CN=Status CA,C=DE',
    validityDays: 30,
    ca: true,
  })
  const leaf = await generateKeyPair('ES256')
  const leafPem = await createCertificate({
    subjectPublicJwk: leaf.publicJwk,
    issuerPrivateJwk: ca.privateJwk,
    issuerCertificate: caPem,
    subject: 'CN=Status Issuer,C=DE',
    validityDays: 30,
  })
  const key = createPrivateKey({ key: leaf.privateJwk as never, format: 'jwk' })
  const signer: Signer = {
    alg: 'ES256',
    kid: leaf.kid,
    publicJwk: leaf.publicJwk,
    x5c: [new X509Certificate(leafPem).raw.toString('base64')],
    sign: async (data) => signWithKeyObject(key, 'ES256', data),
  }
  const lists: Record<string, { token: string | Uint8Array; type: string; headers: Record<string, string> }> =
    {}
  const requests: Record<string, number> = {}
  /** The Accept header of the last request per path. */
  const accepts: Record<string, string | undefined> = {}
  const notModified: Record<string, number> = {}
  /** down: the connection is dropped; answer: that status instead of the list; slowMs: answer that late. */
  const state: { down: boolean; answer?: number | undefined; slowMs?: number | undefined } = { down: false }
  const server = createServer(async (req, res) => {
    const path = String(req.url)
    requests[path] = (requests[path] ?? 0) + 1
    accepts[path] = req.headers.accept
    if (state.down) return res.destroy()
    if (state.answer) return res.writeHead(state.answer).end()
    if (state.slowMs) await new Promise((resolve) => setTimeout(resolve, state.slowMs))
    if (res.destroyed) return
    const served = lists[path]
    const etag = served?.headers.etag
    if (etag && req.headers['if-none-match'] === etag) {
      notModified[path] = (notModified[path] ?? 0) + 1
      return res.writeHead(304, served.headers).end()
    }
    res
      .writeHead(200, { 'content-type': served?.type ?? 'application/statuslist+jwt', ...served?.headers })
      .end(served?.token ?? '')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    anchor: new X509Certificate(caPem),
    server,
    requests,
    accepts,
    notModified,
    state,
    /** Serves a list of these bytes at `path`; its URI. */
    async serve(path: string, bytes: Uint8Array, options: Served = {}) {
      const uri = `${base}${path}`
      // On the checks' clock: `exp` counts from the start of the file, however long the tests
      // before took (the zlib bomb inflates for a second on a loaded machine).
      const now = Math.floor(start / 1000)
      const lst = deflateSync(bytes).toString('base64url')
      const token = await signJws(
        signer,
        { typ: 'statuslist+jwt', x5c: signer.x5c },
        {
          sub: uri,
          iat: now,
          exp: now + (options.exp ?? 600),
          ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
          status_list: { bits: options.bits ?? 1, lst },
        },
      )
      lists[path] = { token, type: 'application/statuslist+jwt', headers: options.headers ?? {} }
      return uri
    },
    /** Serves the list in CWT form (TSL §5.2) at `path`, its signature broken if `tamper`; its URI. */
    async serveCwt(path: string, bytes: Uint8Array, options: Served & { tamper?: boolean } = {}) {
      const uri = `${base}${path}`
      const now = start - (start % 1000)
      const token = await signStatusListCwt({
        signer,
        uri: options.sub ?? uri,
        bits: options.bits ?? 1,
        lst: deflateSync(bytes),
        issuedAt: new Date(now),
        expiresAt: new Date(now + (options.exp ?? 600) * 1000),
        ttlSeconds: options.ttl ?? 300,
      })
      // The signature is the last byte string of the COSE_Sign1: its last byte changes.
      if (options.tamper) token[token.length - 1] = (token[token.length - 1] as number) ^ 1
      lists[path] = { token, type: 'application/statuslist+cwt', headers: options.headers ?? {} }
      return uri
    },
  }
}

const reasonOf = (promise: Promise<void>) =>
  promise.then(
    () => 'VALID',
    (error: Error) => error.message,
  )
/** What the wallet is told. */
const toWalletOf = (promise: Promise<void>) =>
  promise.then(
    () => 'VALID',
    (error: PresentationRejected) => error.toWallet ?? error.message,
  )

const outbound = { allowHttp: true, allowedHosts: ['127.0.0.1'], maxResponseBytes: 256 * 1024 }
const start = Date.now()
/** `seconds` after the start of the tests: the clock of the checks. */
const at = (seconds: number) => new Date(start + seconds * 1000)
const cache = (options: Partial<Parameters<typeof createStatusLists>[0]> = {}) =>
  createStatusLists({ maxSeconds: 300, maxEntries: 100, maxBytes: 1024 * 1024, ...options })

describe('the status of an mdoc MSO entry (TSL §8.3, V-33)', () => {
  let issuer: Awaited<ReturnType<typeof listIssuer>>
  let check: StatusCheck
  beforeAll(async () => {
    issuer = await listIssuer()
    check = {
      anchors: [issuer.anchor],
      acceptAnyIssuer: false,
      outbound,
      now: new Date(),
      statusLists: cache({ maxSeconds: 0 }),
    }
  })
  afterAll(() => new Promise<void>((resolve) => issuer.server.close(() => resolve())))

  it('F-31: the entry is read LSB-first; VALID passes, INVALID and SUSPENDED fail', async () => {
    const uri = await issuer.serve('/two-bits', Uint8Array.of(0xc9, 0x44, 0xf9), { bits: 2 })
    expect(await reasonOf(requireValidEntry({ uri, idx: 2 }, check))).toBe('VALID')
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check))).toBe(
      'the credential is revoked (INVALID)',
    )
    expect(await reasonOf(requireValidEntry({ uri, idx: 1 }, check))).toBe('the credential is suspended')
  })

  it('S-124, TSL §11.1: a list that inflates beyond the cap (zlib bomb) leaves the status undetermined: rejected', async () => {
    const uri = await issuer.serve('/bomb', new Uint8Array(2 * MAX_STATUS_LIST_BYTES))
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check))).toBe(
      `the status list inflates beyond ${MAX_STATUS_LIST_BYTES} bytes`,
    )
  })

  it('F-33: an index past the end of the list is rejected', async () => {
    const uri = await issuer.serve('/short', new Uint8Array(2))
    expect(await reasonOf(requireValidEntry({ uri, idx: 15 }, check))).toBe('VALID')
    expect(await reasonOf(requireValidEntry({ uri, idx: 16 }, check))).toBe(
      'the status list has no entry at index 16',
    )
  })
})

describe('the status list cache (TSL §8.2, V-33)', () => {
  let issuer: Awaited<ReturnType<typeof listIssuer>>
  let other: Awaited<ReturnType<typeof listIssuer>>
  beforeAll(async () => {
    issuer = await listIssuer()
    other = await listIssuer()
  })
  afterAll(async () => {
    for (const { server } of [issuer, other]) await new Promise((resolve) => server.close(resolve))
  })
  const checkAt = (statusLists: StatusLists, seconds: number, trust: Partial<StatusCheck> = {}) => ({
    anchors: [issuer.anchor],
    acceptAnyIssuer: false,
    outbound,
    now: at(seconds),
    statusLists,
    ...trust,
  })
  const VALID = Uint8Array.of(0)
  const REVOKED = Uint8Array.of(1)

  it('a hit: two presentations, one request to the list server', async () => {
    const lists = cache()
    const uri = await issuer.serve('/hit', VALID)
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0)))).toBe('VALID')
    expect(await reasonOf(requireValidEntry({ uri, idx: 1 }, checkAt(lists, 1)))).toBe('VALID')
    expect(issuer.requests['/hit']).toBe(1)
  })

  it('F-35: a change of a tenant’s own lists drops them at once (the next check reads the revocation); its other tenants’ and foreign lists keep their TTL; a fetch under way is not kept', async () => {
    const lists = cache()
    const own = (tenant: string) => `/issuers/${tenant}/status-lists/f35`
    const mine = await issuer.serve(own('t1'), VALID)
    const neighbour = await issuer.serve(own('t2'), VALID)
    const foreign = await other.serve(own('t1'), VALID)
    const stop = forgetOwnListsOnChange(lists, new URL(mine).origin)
    try {
      const statuses = () =>
        Promise.all(
          [mine, neighbour, foreign].map((uri) =>
            reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0, { acceptAnyIssuer: true }))),
          ),
        )
      expect(await statuses()).toStrictEqual(['VALID', 'VALID', 'VALID'])
      await issuer.serve(own('t1'), REVOKED)
      await issuer.serve(own('t2'), REVOKED)
      await other.serve(own('t1'), REVOKED)
      statusListChanged('t1')
      expect(await statuses()).toStrictEqual([expect.stringContaining('revoked'), 'VALID', 'VALID'])
      expect([
        issuer.requests[own('t1')],
        issuer.requests[own('t2')],
        other.requests[own('t1')],
      ]).toStrictEqual([2, 1, 1])

      // A change while the list is being fetched: what that fetch brings is used once, not kept.
      statusListChanged('t1')
      issuer.state.slowMs = 200
      const during = reasonOf(
        requireValidEntry({ uri: mine, idx: 0 }, checkAt(lists, 1, { acceptAnyIssuer: true })),
      )
      await new Promise((resolve) => setTimeout(resolve, 50))
      statusListChanged('t1')
      await during
      issuer.state.slowMs = undefined
      await reasonOf(requireValidEntry({ uri: mine, idx: 0 }, checkAt(lists, 2, { acceptAnyIssuer: true })))
      expect(issuer.requests[own('t1')]).toBe(4)
    } finally {
      stop()
      issuer.state.slowMs = undefined
    }
  })

  it('STATUS_LIST_CACHE_MAX_SECONDS=0 keeps nothing: every presentation fetches the list', async () => {
    const lists = cache({ maxSeconds: 0 })
    const uri = await issuer.serve('/off', VALID, { ttl: 60 })
    for (const seconds of [0, 1]) await requireValidEntry({ uri, idx: 0 }, checkAt(lists, seconds))
    expect(issuer.requests['/off']).toBe(2)
    expect(lists.size).toBe(0)
  })

  it.each([
    { source: 'ttl', served: { ttl: 60 }, maxSeconds: 300, lifetime: 60 },
    {
      source: 'max-age',
      served: { ttl: 60, headers: { 'cache-control': 'max-age=20' } },
      maxSeconds: 300,
      lifetime: 20,
    },
    { source: 'exp', served: { ttl: 60, exp: 30 }, maxSeconds: 300, lifetime: 30 },
    { source: 'the maximum', served: { ttl: 600 }, maxSeconds: 40, lifetime: 40 },
  ])(
    'expiry by $source: a list changed on the server is seen once $lifetime s have passed',
    async ({ source, served, maxSeconds, lifetime }) => {
      const lists = cache({ maxSeconds })
      const path = `/expiry-${source.replace(/\W/g, '')}`
      const uri = await issuer.serve(path, VALID, served)
      expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0)))).toBe('VALID')
      await issuer.serve(path, REVOKED, { ...served, exp: 600 })
      expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, lifetime - 5)))).toBe('VALID')
      expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, lifetime + 1)))).toBe(
        'the credential is revoked (INVALID)',
      )
      expect(issuer.requests[path]).toBe(2)
    },
  )

  it('Cache-Control: no-store keeps nothing; no-cache keeps the list for a revalidation on each use', async () => {
    const lists = cache()
    const noStore = await issuer.serve('/no-store', VALID, {
      ttl: 60,
      headers: { 'cache-control': 'no-store' },
    })
    const noCache = await issuer.serve('/no-cache', VALID, {
      ttl: 60,
      headers: { 'cache-control': 'no-cache', etag: '"v1"' },
    })
    for (const seconds of [0, 1]) {
      await requireValidEntry({ uri: noStore, idx: 0 }, checkAt(lists, seconds))
      await requireValidEntry({ uri: noCache, idx: 0 }, checkAt(lists, seconds))
    }
    expect(issuer.requests['/no-store']).toBe(2)
    expect([issuer.requests['/no-cache'], issuer.notModified['/no-cache']]).toStrictEqual([2, 1])
  })

  it('ETag revalidation: once the lifetime ends, a 304 keeps the verified list for another lifetime', async () => {
    const lists = cache()
    const uri = await issuer.serve('/etag', VALID, { ttl: 60, headers: { etag: '"v1"' } })
    await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0))
    const verified = lists.get(uri)
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 61)))).toBe('VALID')
    expect([issuer.requests['/etag'], issuer.notModified['/etag']]).toStrictEqual([2, 1])
    // Not verified again: the same inflated list and the chain checks it passed.
    expect(lists.get(uri)?.list).toBe(verified?.list)
    expect(lists.get(uri)?.trusted).toBe(verified?.trusted)
    expect(lists.get(uri)?.freshUntil).toBe(at(121).getTime())
    await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 120))
    expect(issuer.requests['/etag']).toBe(2)
  })

  it('concurrent misses: 20 parallel checks of one list make one request', async () => {
    const lists = cache()
    const uri = await issuer.serve('/parallel', VALID)
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0)))),
    )
    expect(new Set(outcomes)).toStrictEqual(new Set(['VALID']))
    expect(issuer.requests['/parallel']).toBe(1)
  })

  it('S-135: with the server down and no stale window, the list is used within its lifetime, then the check is retryable, not a verdict', async () => {
    const lists = cache()
    const uri = await issuer.serve('/down', VALID, { ttl: 60, headers: { etag: '"v1"' } })
    await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0))
    issuer.state.down = true
    try {
      expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 59)))).toBe('VALID')
      const late = await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 61)).catch((error) => error)
      expect(late).toBeInstanceOf(UpstreamUnavailableError)
      expect(late).not.toBeInstanceOf(PresentationRejected)
      expect([late.detail, late.cause.message, late.retryAfterSeconds]).toStrictEqual([
        STATUS_UNAVAILABLE,
        'the status list could not be reached',
        5,
      ])
      expect(lists.get(uri)).toBeUndefined()
    } finally {
      issuer.state.down = false
    }
  })

  it('past its exp the cached list is never revalidated: a fresh fetch finds it expired, refused', async () => {
    const lists = cache()
    const uri = await issuer.serve('/exp', VALID, { ttl: 60, exp: 100, headers: { etag: '"v1"' } })
    await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0))
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 101)))).toBe(
      'the status list token has expired',
    )
    expect(issuer.notModified['/exp']).toBeUndefined()
  })

  it('memory bound: past STATUS_LIST_CACHE_MAX_ENTRIES or _MAX_BYTES the least recently used list is evicted', async () => {
    const lists = cache({ maxEntries: 2 })
    const [a, b, c] = await Promise.all(
      ['/lru-a', '/lru-b', '/lru-c'].map((path) => issuer.serve(path, VALID)),
    )
    for (const uri of [a, b, a, c, a, b] as string[])
      await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0))
    // b was the least recently used when c came, c when b came back.
    expect(['/lru-a', '/lru-b', '/lru-c'].map((path) => issuer.requests[path])).toStrictEqual([1, 2, 1])
    expect(lists.size).toBe(2)

    const small = cache({ maxBytes: 3000 })
    const big = await issuer.serve('/big', new Uint8Array(4000))
    await requireValidEntry({ uri: big, idx: 0 }, checkAt(small, 0))
    expect(small.size).toBe(0)
    const [d, e] = await Promise.all(
      ['/bytes-d', '/bytes-e'].map((path) => issuer.serve(path, new Uint8Array(1000))),
    )
    for (const uri of [d, e] as string[]) await requireValidEntry({ uri, idx: 0 }, checkAt(small, 0))
    expect(small.size).toBe(1)
    expect(small.bytes).toBeLessThanOrEqual(3000)
  })

  it('trust separation: a list cached under acceptAnyIssuer is checked against the next tenant’s anchors', async () => {
    const lists = cache()
    const uri = await issuer.serve('/trust', VALID)
    const anyIssuer = { acceptAnyIssuer: true, anchors: [] }
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0, anyIssuer)))).toBe('VALID')
    const otherTenant = { anchors: [other.anchor] }
    const refused = requireValidEntry({ uri, idx: 0 }, checkAt(lists, 1, otherTenant))
    expect(await reasonOf(refused)).toBe(
      'status list: the issuer does not chain to a trust anchor of this tenant',
    )
    expect(await toWalletOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 1, otherTenant)))).toBe(
      STATUS_UNCHECKED,
    )
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 2)))).toBe('VALID')
    expect(issuer.requests['/trust']).toBe(1)
  })
})

describe('Status List Tokens in CWT form (TSL §5.2, §8.3, V-33)', () => {
  let issuer: Awaited<ReturnType<typeof listIssuer>>
  let stranger: Awaited<ReturnType<typeof listIssuer>>
  let check: StatusCheck
  beforeAll(async () => {
    issuer = await listIssuer()
    stranger = await listIssuer()
    check = {
      anchors: [issuer.anchor],
      acceptAnyIssuer: false,
      outbound,
      now: new Date(),
      statusLists: cache({ maxSeconds: 0 }),
    }
  })
  afterAll(async () => {
    for (const { server } of [issuer, stranger]) await new Promise((resolve) => server.close(resolve))
  })

  it('TSL §8.1: an mdoc entry asks for the CWT first, any other entry for the JWT; either answer is read', async () => {
    const uri = await issuer.serveCwt('/cwt-accept', Uint8Array.of(0))
    await requireValidEntry({ uri, idx: 0 }, check, 'cwt')
    expect(issuer.accepts['/cwt-accept']).toBe('application/statuslist+cwt, application/statuslist+jwt;q=0.9')
    await requireValidEntry({ uri, idx: 0 }, check)
    expect(issuer.accepts['/cwt-accept']).toBe('application/statuslist+jwt, application/statuslist+cwt;q=0.9')
  })

  it('TSL §5.2, §4.1: VALID passes, INVALID and SUSPENDED are refused', async () => {
    const uri = await issuer.serveCwt('/cwt-two-bits', Uint8Array.of(0xc9, 0x44, 0xf9), { bits: 2 })
    expect(await reasonOf(requireValidEntry({ uri, idx: 2 }, check, 'cwt'))).toBe('VALID')
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check, 'cwt'))).toBe(
      'the credential is revoked (INVALID)',
    )
    expect(await reasonOf(requireValidEntry({ uri, idx: 1 }, check, 'cwt'))).toBe(
      'the credential is suspended',
    )
  })

  it('TSL §8.3: a CWT whose COSE signature was tampered with is refused', async () => {
    const uri = await issuer.serveCwt('/cwt-tampered', Uint8Array.of(0), { tamper: true })
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check, 'cwt'))).toBe(
      'the status list signature does not verify',
    )
    expect(await toWalletOf(requireValidEntry({ uri, idx: 0 }, check, 'cwt'))).toBe(STATUS_UNCHECKED)
  })

  it('TSL §5.2, §8.3: a CWT whose sub is another URI is refused', async () => {
    const uri = await issuer.serveCwt('/cwt-sub', Uint8Array.of(0), { sub: 'https://elsewhere.example/list' })
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check, 'cwt'))).toBe(
      'the status list token is for another URI',
    )
  })

  it('TSL §5.2, §8.3: a CWT past its exp is refused', async () => {
    const uri = await issuer.serveCwt('/cwt-expired', Uint8Array.of(0), { exp: -60 })
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check, 'cwt'))).toBe(
      'the status list token has expired',
    )
  })

  it('TSL §8.3, S-127: a CWT signed outside the trust anchors (its x5chain) is refused', async () => {
    const uri = await stranger.serveCwt('/cwt-stranger', Uint8Array.of(0))
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check, 'cwt'))).toBe(
      'status list: the issuer does not chain to a trust anchor of this tenant',
    )
  })

  it('TSL §8.2: the ttl of a CWT bounds the cache, and its ETag revalidates with the CWT Accept', async () => {
    const lists = cache()
    const uri = await issuer.serveCwt('/cwt-cached', Uint8Array.of(0), { ttl: 10, headers: { etag: '"c1"' } })
    const at0 = { ...check, statusLists: lists, now: at(0) }
    await requireValidEntry({ uri, idx: 0 }, at0, 'cwt')
    await requireValidEntry({ uri, idx: 0 }, { ...at0, now: at(9) })
    expect(issuer.requests['/cwt-cached']).toBe(1)
    // An SD-JWT entry on the same list revalidates the CWT copy, so asks for the CWT first too.
    await requireValidEntry({ uri, idx: 0 }, { ...at0, now: at(11) })
    expect(issuer.requests['/cwt-cached']).toBe(2)
    expect(issuer.notModified['/cwt-cached']).toBe(1)
    expect(issuer.accepts['/cwt-cached']).toMatch(/^application\/statuslist\+cwt,/)
  })
})

describe('S-135: a status list its server cannot give now is no verdict (TSL §5.1 ttl, RFC 5861 §4 stale-if-error)', () => {
  let issuer: Awaited<ReturnType<typeof listIssuer>>
  beforeAll(async () => {
    issuer = await listIssuer()
  })
  afterAll(() => new Promise<void>((resolve) => issuer.server.close(() => resolve())))
  const checkAt = (statusLists: StatusLists, seconds: number) => ({
    anchors: [issuer.anchor],
    acceptAnyIssuer: false,
    outbound,
    now: at(seconds),
    statusLists,
  })
  /** VALID, the verdict's reason, or `retry` for a check to do again later. */
  const outcome = (promise: Promise<void>) =>
    promise.then(
      () => 'VALID',
      (error: Error) => (error instanceof UpstreamUnavailableError ? 'retry' : error.message),
    )
  const outage = async (state: Partial<typeof issuer.state>, run: () => Promise<void>) => {
    Object.assign(issuer.state, state)
    try {
      await run()
    } finally {
      Object.assign(issuer.state, { down: false, answer: undefined, slowMs: undefined })
    }
  }
  // Index 0 VALID, index 1 INVALID.
  const LIST = Uint8Array.of(0b10)

  // TSL §5.1: `ttl` is "the maximum amount of time, in seconds, that the Status List Token can be
  // cached by a consumer before a fresh copy SHOULD be retrieved"; `exp` is a hard end.
  it.each([
    { failure: 'the connection is dropped', state: { down: true } },
    { failure: 'HTTP 503', state: { answer: 503 } },
    { failure: 'HTTP 429', state: { answer: 429 } },
  ])(
    'while $failure, the last good list answers for STATUS_LIST_CACHE_STALE_IF_ERROR_SECONDS past its ttl, then the check is retryable',
    async ({ failure, state }) => {
      const lists = cache({ staleIfErrorSeconds: 120 })
      const path = `/stale-${failure.replace(/\W/g, '')}`
      const uri = await issuer.serve(path, LIST, { ttl: 60 })
      expect(await outcome(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0)))).toBe('VALID')
      await outage(state, async () => {
        expect(await outcome(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 100)))).toBe('VALID')
        // A revoked entry in the stale list is a verdict all the same.
        expect(await outcome(requireValidEntry({ uri, idx: 1 }, checkAt(lists, 170)))).toBe(
          'the credential is revoked (INVALID)',
        )
        expect(await outcome(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 181)))).toBe('retry')
        expect(lists.get(uri)).toBeUndefined()
      })
      // Up again: checked as before.
      expect(await outcome(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 182)))).toBe('VALID')
    },
  )

  it('a server slower than the 5 s fetch timeout is an outage too: the stale list answers, none is a retry; for 5 s the failing server is not asked again', async () => {
    const lists = cache({ staleIfErrorSeconds: 120 })
    const uri = await issuer.serve('/slow', LIST, { ttl: 60 })
    const none = await issuer.serve('/slow-none', LIST, { ttl: 60 })
    await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0))
    await outage({ slowMs: 6000 }, async () => {
      const [stale, missing] = await Promise.all([
        outcome(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 100))),
        outcome(requireValidEntry({ uri: none, idx: 0 }, checkAt(lists, 100))),
      ])
      expect([stale, missing]).toStrictEqual(['VALID', 'retry'])
      const started = Date.now()
      expect(await outcome(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 104)))).toBe('VALID')
      expect(Date.now() - started).toBeLessThan(1000)
      expect(issuer.requests['/slow']).toBe(2)
    })
  }, 20_000)

  it('no stale answer past the token’s exp, after Cache-Control no-cache or must-revalidate, or with the window 0', async () => {
    const window = cache({ staleIfErrorSeconds: 600 })
    const expiring = await issuer.serve('/stale-exp', LIST, { ttl: 60, exp: 90 })
    const noCache = await issuer.serve('/stale-no-cache', LIST, {
      ttl: 60,
      headers: { 'cache-control': 'no-cache', etag: '"n1"' },
    })
    const mustRevalidate = await issuer.serve('/stale-must-revalidate', LIST, {
      ttl: 60,
      headers: { 'cache-control': 'max-age=60, must-revalidate' },
    })
    const noWindow = cache({ staleIfErrorSeconds: 0 })
    const plain = await issuer.serve('/stale-off', LIST, { ttl: 60 })
    for (const uri of [expiring, noCache, mustRevalidate])
      await requireValidEntry({ uri, idx: 0 }, checkAt(window, 0))
    await requireValidEntry({ uri: plain, idx: 0 }, checkAt(noWindow, 0))
    await outage({ down: true }, async () => {
      expect(await outcome(requireValidEntry({ uri: expiring, idx: 0 }, checkAt(window, 80)))).toBe('VALID')
      expect(await outcome(requireValidEntry({ uri: expiring, idx: 0 }, checkAt(window, 91)))).toBe('retry')
      expect(await outcome(requireValidEntry({ uri: noCache, idx: 0 }, checkAt(window, 1)))).toBe('retry')
      expect(await outcome(requireValidEntry({ uri: mustRevalidate, idx: 0 }, checkAt(window, 61)))).toBe(
        'retry',
      )
      expect(await outcome(requireValidEntry({ uri: plain, idx: 0 }, checkAt(noWindow, 61)))).toBe('retry')
    })
  })

  it('final: a 404, or a list that fails its signature, is a refusal, and no stale copy stands in for it', async () => {
    const lists = cache({ staleIfErrorSeconds: 600 })
    const uri = await issuer.serve('/final', LIST, { ttl: 60 })
    await requireValidEntry({ uri, idx: 0 }, checkAt(lists, 0))
    await outage({ answer: 404 }, async () => {
      expect(await outcome(requireValidEntry({ uri, idx: 0 }, checkAt(lists, 61)))).toBe(
        'the status list could not be fetched: HTTP 404',
      )
    })
    const forged = await issuer.serveCwt('/final-forged', LIST, { ttl: 60, tamper: true })
    expect(await outcome(requireValidEntry({ uri: forged, idx: 0 }, checkAt(lists, 62)))).toBe(
      'the status list signature does not verify',
    )
  })
})
