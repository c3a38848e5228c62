import { type KeyObject, X509Certificate } from 'node:crypto'
import { UpstreamError, UpstreamUnavailableError } from '@credential-service/core-domain'
import {
  decodeBitstring,
  decodeStatusListCwt,
  PresentationRejected,
  readStatusList,
  STATUS_LIST_CWT_TYPE,
  type StatusList,
  StatusListError,
} from '@credential-service/crypto'
import { compactVerify, decodeJwt, decodeProtectedHeader } from 'jose'
import { type OutboundPolicy, outboundFetch } from '../outbound-fetch'
import type { CachedValue } from './status-list-cache'

const STATUS_LIST_TIMEOUT_MS = 5000

/**
 * What the presenter learns of a list that could not be fetched or read. The list URI comes from
 * the credential, so with `acceptAnyIssuer` from anyone: the reason (a non-public address, a host
 * that does not answer, the settings that allow it) would let them map the verifier's network.
 */
export const STATUS_UNCHECKED = 'the credential status could not be checked'
export const unchecked = (reason: string) => new PresentationRejected(reason, STATUS_UNCHECKED)

/** Seconds a wallet is told to wait before it posts the same response again. */
export const STATUS_RETRY_AFTER_SECONDS = 5

/**
 * A list that could not be had now (its server timed out, was not reached, or answered 5xx, 408
 * or 429) is no verdict: the response is answered 503 `temporarily_unavailable` with
 * `Retry-After`, and its session stays pending (S-135). The reason is logged only.
 */
export const STATUS_UNAVAILABLE = 'the credential status cannot be checked now; send the same response again'
export const unavailable = (reason: string) =>
  new UpstreamUnavailableError(STATUS_UNAVAILABLE, {
    cause: new Error(reason),
    retryAfterSeconds: STATUS_RETRY_AFTER_SECONDS,
  })

/** The media type of a status list credential secured as a JWT (VC-JOSE-COSE §6.1.1). */
const VC_JWT_TYPE = 'application/vc+jwt'

/** HTTP statuses of a server that may answer later (RFC 9110 §15.6, §15.5.9; RFC 6585 §4). */
const retryableStatus = (status: number) => status >= 500 || status === 408 || status === 429

/**
 * The two forms of a Status List Token (TSL §5.1, §5.2), and a W3C status list credential
 * (Bitstring Status List §2.2, a vc+jwt), which W3C VCs name.
 */
export type StatusListForm = 'jwt' | 'cwt' | 'bitstring'

/** A Status List Token whose form and signature were checked, with how long it may be used. */
export interface FetchedList extends CachedValue {
  /** The form it came in: a revalidation asks for the same one, so that its ETag applies. */
  form: StatusListForm
  x5c: unknown
  list: StatusList
  etag: string | undefined
  /** A status list credential's `statusPurpose` (Bitstring Status List §2.2); undefined for tokens. */
  purpose: string | undefined
  /** `ttl` of the token (TSL §5.1), in seconds. */
  ttl: number | undefined
  /** End of its validity (ms): its `exp` and the earliest `notAfter` of its x5c chain. */
  validUntil: number
  /** Until when (ms) it is used without asking its server again. */
  freshUntil: number
  /** Cache-Control: no-store. */
  noStore: boolean
  /** Whether it may stand in past its freshness when its server cannot answer (not after no-cache, must-revalidate). */
  staleIfError: boolean
  /** After a failed refetch, until when (ms) the stale copy answers without asking again. */
  quietUntil?: number
  /** Fingerprints of the trust anchor sets its x5c chain passed; the chain is checked once per set. */
  trusted: Set<string>
}

export interface FetchOptions {
  uri: string
  outbound: OutboundPolicy
  now: Date
  maxSeconds: number
  /** A still valid copy to revalidate with If-None-Match (TSL §8.2): a 304 keeps it. */
  previous?: FetchedList | undefined
  /** The form asked for first; the other one is accepted too. JWT unless said otherwise. */
  prefer?: StatusListForm | undefined
}

/**
 * `Accept` of a list request (TSL §8.1): both forms, the preferred one first. Either answer is
 * read by its Content-Type; one that names neither is read as JWT, as servers that send
 * `application/jwt` or no type at all were before.
 */
const ACCEPT: Record<StatusListForm, string> = {
  jwt: `application/statuslist+jwt, ${STATUS_LIST_CWT_TYPE};q=0.9`,
  cwt: `${STATUS_LIST_CWT_TYPE}, application/statuslist+jwt;q=0.9`,
  bitstring: VC_JWT_TYPE,
}

type Headers = Record<string, string | string[] | undefined>

/**
 * How long a list is used (TSL §8.2, RFC 9111): the shortest of its `ttl`, the response's
 * `max-age` and `maxSeconds`, never past its validity; `no-cache` and `no-store` mean not at all
 * without asking again.
 */
function freshUntil(
  headers: Headers,
  list: Pick<FetchedList, 'ttl' | 'validUntil'>,
  now: number,
  maxSeconds: number,
) {
  const directives = new Map(
    String(headers['cache-control'] ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase().split('=') as [string, string | undefined])
      .filter(([name]) => name),
  )
  if (directives.has('no-cache') || directives.has('no-store')) return now
  const maxAge = Number(directives.get('max-age') ?? Number.POSITIVE_INFINITY)
  const seconds = Math.min(maxSeconds, list.ttl ?? maxSeconds, Number.isNaN(maxAge) ? 0 : maxAge)
  return Math.min(now + Math.max(0, seconds) * 1000, list.validUntil)
}

const directive = (headers: Headers, name: string) =>
  new RegExp(`(^|,)\\s*${name}\\s*(,|=|$)`, 'i').test(String(headers['cache-control'] ?? ''))
const noStore = (headers: Headers) => directive(headers, 'no-store')
/** RFC 9111 §4.2.4: no stale answer where the server forbade it. */
const staleIfError = (headers: Headers) =>
  !['no-store', 'no-cache', 'must-revalidate', 'proxy-revalidate'].some((name) => directive(headers, name))

/**
 * Fetches a Status List Token (draft-ietf-oauth-status-list §8.3, checklist V-33) under the
 * outbound policy (`outboundFetch`: checked address, https, size cap), checks its `typ`, `sub`,
 * expiry and signature by its `x5c` leaf, and inflates its list. Its chain is checked against the
 * trust of each use (`requireTrusted`).
 */
export async function fetchStatusList(options: FetchOptions): Promise<FetchedList> {
  const { uri, previous } = options
  const now = options.now.getTime()
  let response: Awaited<ReturnType<typeof outboundFetch>>
  try {
    // The URI comes from the credential, so from whoever issued it: same outbound rules as
    // tenant-configured URLs (checklist S-121), https unless OUTBOUND_ALLOW_HTTP.
    response = await outboundFetch(
      uri,
      {
        name: 'the status list',
        purpose: 'status-list',
        headers: {
          accept: ACCEPT[previous?.form ?? options.prefer ?? 'jwt'],
          ...(previous?.etag ? { 'if-none-match': previous.etag } : {}),
        },
        timeoutMs: STATUS_LIST_TIMEOUT_MS,
      },
      options.outbound,
    )
  } catch (error) {
    if (error instanceof UpstreamError && error.transient) throw unavailable(error.detail)
    throw unchecked(error instanceof UpstreamError ? error.detail : 'the status list could not be fetched')
  }
  if (response.status === 304 && previous?.etag) {
    const headers = response.headers as Headers
    return {
      ...previous,
      freshUntil: freshUntil(headers, previous, now, options.maxSeconds),
      noStore: noStore(headers),
      staleIfError: staleIfError(headers),
      quietUntil: 0,
    }
  }
  if (retryableStatus(response.status))
    throw unavailable(`the status list could not be fetched: HTTP ${response.status}`)
  if (response.status < 200 || response.status >= 300)
    throw unchecked(`the status list could not be fetched: HTTP ${response.status}`)
  const contentType = String(response.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase()
  const token =
    contentType === STATUS_LIST_CWT_TYPE
      ? await openCwt(response.body)
      : (previous?.form ?? options.prefer) === 'bitstring'
        ? openStatusListCredential(response.body)
        : openJwt(response.body)
  const { payload } = token
  if (payload.sub !== uri) throw unchecked('the status list token is for another URI')
  if (typeof payload.exp === 'number' && payload.exp * 1000 <= now)
    throw unchecked('the status list token has expired')
  let chain: X509Certificate[]
  try {
    chain = (Array.isArray(token.x5c) ? token.x5c : []).map(
      (der) => new X509Certificate(Buffer.from(String(der), 'base64')),
    )
    // The status list token is signed by the leaf of its `x5c` (`x5chain` in a CWT).
    await token.verify((chain[0] as X509Certificate).publicKey)
  } catch {
    throw unchecked('the status list signature does not verify')
  }
  let list: StatusList
  try {
    list = token.list()
  } catch (error) {
    if (!(error instanceof StatusListError)) throw error
    throw unchecked(`the status list ${error.message}`)
  }
  const validUntil = Math.min(
    typeof payload.exp === 'number' ? payload.exp * 1000 : Number.POSITIVE_INFINITY,
    ...chain.map((certificate) => Date.parse(certificate.validTo)),
  )
  const ttl = typeof payload.ttl === 'number' && payload.ttl >= 0 ? payload.ttl : undefined
  const etag = response.headers.etag
  const headers = response.headers as Headers
  return {
    form: token.form,
    x5c: token.x5c,
    list,
    purpose: token.purpose,
    etag: typeof etag === 'string' ? etag : undefined,
    ttl,
    validUntil,
    freshUntil: freshUntil(headers, { ttl, validUntil }, now, options.maxSeconds),
    noStore: noStore(headers),
    staleIfError: staleIfError(headers),
    trusted: new Set(),
    // What stays in memory: the inflated list and the chain.
    bytes: list.bytes.length + String(token.x5c).length,
  }
}

/** A token of either form, decoded; its signature and list are read only through verify and list. */
interface OpenedToken {
  form: StatusListForm
  x5c: unknown
  payload: { sub?: unknown; exp?: unknown; ttl?: unknown }
  purpose?: string | undefined
  /** Throws unless the signature verifies with `key`. */
  verify(key: KeyObject): Promise<void>
  list(): StatusList
}

/** The header and claims of a JWT, unverified; one that does not decode is `<what> is not a JWT`. */
function decodedJwt(token: string, what: string) {
  try {
    return { header: decodeProtectedHeader(token), payload: decodeJwt(token) }
  } catch {
    throw unchecked(`${what} is not a JWT`)
  }
}

/** A Status List Token in JWT form (TSL §5.1): `typ` statuslist+jwt. */
function openJwt(body: Buffer): OpenedToken {
  const token = body.toString('utf8')
  const { header, payload } = decodedJwt(token, 'the status list')
  if (header.typ !== 'statuslist+jwt') throw unchecked('the status list token typ is not statuslist+jwt')
  return {
    form: 'jwt',
    x5c: header.x5c,
    payload,
    verify: async (key) => {
      await compactVerify(token, key)
    },
    list: () => readStatusList(token),
  }
}

/**
 * A BitstringStatusListCredential as a vc+jwt (Bitstring Status List §2.2, VC-JOSE-COSE §3.1.1):
 * its `id` stands for the token's `sub`, its `exp` (or `validUntil`) for `exp`, its `ttl`
 * (milliseconds) for the token's (seconds). Its list is read by decodeBitstring.
 */
function openStatusListCredential(body: Buffer): OpenedToken {
  const token = body.toString('utf8')
  const { header, payload } = decodedJwt(token, 'the status list credential')
  const subject = (payload.credentialSubject ?? {}) as {
    type?: unknown
    statusPurpose?: unknown
    ttl?: unknown
    encodedList?: unknown
  }
  if (
    header.typ !== 'vc+jwt' ||
    ![payload.type].flat().includes('BitstringStatusListCredential') ||
    subject.type !== 'BitstringStatusList'
  )
    throw unchecked('the status list is not a BitstringStatusListCredential (vc+jwt)')
  const validUntil =
    typeof payload.validUntil === 'string' ? Date.parse(payload.validUntil) / 1000 : undefined
  return {
    form: 'bitstring',
    x5c: header.x5c,
    payload: {
      sub: payload.id,
      exp: Math.min(payload.exp ?? Number.POSITIVE_INFINITY, validUntil ?? Number.POSITIVE_INFINITY),
      ttl: typeof subject.ttl === 'number' ? Math.floor(subject.ttl / 1000) : undefined,
    },
    purpose: typeof subject.statusPurpose === 'string' ? subject.statusPurpose : undefined,
    verify: async (key) => {
      await compactVerify(token, key)
    },
    list: () => decodeBitstring(subject.encodedList),
  }
}

/** A Status List Token in CWT form (TSL §5.2): a COSE_Sign1 with `typ` application/statuslist+cwt. */
async function openCwt(body: Buffer): Promise<OpenedToken> {
  let cwt: Awaited<ReturnType<typeof decodeStatusListCwt>>
  try {
    cwt = await decodeStatusListCwt(body)
  } catch (error) {
    if (!(error instanceof StatusListError)) throw error
    throw unchecked(`the status list ${error.message}`)
  }
  if (cwt.typ !== STATUS_LIST_CWT_TYPE)
    throw unchecked(`the status list token typ is not ${STATUS_LIST_CWT_TYPE}`)
  return {
    form: 'cwt',
    x5c: cwt.x5c,
    payload: cwt,
    verify: async (key) => {
      if (!cwt.verify(key)) throw new Error('the COSE signature does not verify')
    },
    list: () => cwt.list(),
  }
}
