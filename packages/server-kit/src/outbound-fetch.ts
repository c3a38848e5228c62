import type { LookupAddress, LookupOptions } from 'node:dns'
import { lookup } from 'node:dns/promises'
import {
  checkOutboundUrl,
  isAllowedHost,
  isIpAddress,
  nonPublicRange,
  type OutboundUrlPolicy,
  UpstreamError,
} from '@credential-service/core-domain'
import { injectTraceHeaders, inSpan, tracingOn } from '@credential-service/core-domain/tracing'
import type { Agent } from 'undici'

// undici (about 110 modules) is loaded at the first outbound call, not at start: a process that
// has not called out yet (or never does) keeps it out of its resident memory (issue 20).
type Undici = typeof import('undici')
let undici: Promise<Undici> | undefined
const loadUndici = () => (undici ??= import('undici'))

/** Resolves a host name to its addresses (DNS by default; not our component, so tests pass their own). */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>

/** Where and how much the service may fetch: OUTBOUND_ALLOW_HTTP, OUTBOUND_ALLOWED_HOSTS, OUTBOUND_MAX_RESPONSE_BYTES. */
export interface OutboundPolicy extends OutboundUrlPolicy {
  /** Largest response body read, in bytes; a longer answer is cut off and the call fails. */
  maxResponseBytes: number
  /** Name resolution; `undefined` means the system resolver (`dns.lookup`). */
  resolve?: ResolveHost
}

/** What an outbound call is for: the name of its span (`POST attribute-provider`). */
export type OutboundPurpose =
  | 'attribute-provider'
  | 'webhook'
  | 'status-list'
  | 'login-provider'
  | 'registrar'
  | 'trust-list'
  | 'authorization-server'
  | 'federation'

export interface OutboundRequest {
  /** What is called, for error details: `attribute provider 'hr'`, `the status list`. */
  name: string
  /** Names the call's span; undefined: `outbound`. */
  purpose?: OutboundPurpose
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** False when only the status matters (webhooks): the answer is not read at all. Default true. */
  readBody?: boolean
  /** Limit for the whole exchange, from connecting to the last byte of the answer. */
  timeoutMs: number
  /** Largest answer read for this call; default the policy's `maxResponseBytes` (trust lists: TRUST_LIST_MAX_BYTES). */
  maxBytes?: number
}

export interface OutboundResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The whole answer, at most `maxResponseBytes` long; empty when `readBody` is false. */
  body: Buffer
}

/** A connection refused by the policy; turned into an UpstreamError by `outboundFetch`. */
class AddressRefused extends Error {}

const systemResolver: ResolveHost = (hostname) => lookup(hostname, { all: true })

function refusal(host: string, address: string, policy: OutboundPolicy): AddressRefused | undefined {
  if (isAllowedHost(host, policy)) return undefined
  const range = nonPublicRange(address)
  if (!range) return undefined
  const what = host === address ? `'${host}' is` : `'${host}' resolves to`
  return new AddressRefused(`${what} a non-public address (${range}); allow it with OUTBOUND_ALLOWED_HOSTS`)
}

/**
 * `net.connect`'s `lookup`: resolves once, refuses the name if any address is non-public, and
 * hands Node exactly the addresses it checked, so the socket connects to one of them and a
 * second DNS answer (rebinding) never comes into play.
 */
function checkedLookup(policy: OutboundPolicy) {
  const resolve = policy.resolve ?? systemResolver
  return (
    hostname: string,
    options: LookupOptions,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    resolve(hostname)
      .then((all) => {
        for (const { address } of all) {
          const refused = refusal(hostname, address, policy)
          if (refused) throw refused
        }
        const addresses = options.family ? all.filter((a) => a.family === options.family) : all
        if (!addresses.length) throw new Error(`${hostname} has no address`)
        if (options.all) callback(null, addresses)
        else callback(null, (addresses[0] as LookupAddress).address, (addresses[0] as LookupAddress).family)
      })
      .catch((error: Error) => callback(error, ''))
  }
}

/**
 * One dispatcher per call: every connection it opens goes through the checks above (IP literals
 * skip `lookup` in Node, so they are checked here), and no pooled socket outlives the call.
 */
function guardedAgent({ Agent, buildConnector }: Undici, policy: OutboundPolicy, timeoutMs: number): Agent {
  const connector = buildConnector({ timeout: timeoutMs, lookup: checkedLookup(policy) })
  return new Agent({
    connect: (options, callback) => {
      if (isIpAddress(options.hostname)) {
        const refused = refusal(options.hostname, options.hostname, policy)
        if (refused) return callback(refused, null)
      }
      connector(options, callback)
    },
  })
}

/** Stops reading an answer and closes its socket (undici reports that as an error nobody needs). */
function abandon(body: NodeJS.ReadableStream & { destroy(): void }) {
  body.on('error', () => undefined)
  body.destroy()
}

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = []
  for (let e = error; e instanceof Error && chain.length < 5; e = e.cause) chain.push(e)
  return chain
}

/**
 * The one way the service calls a URL that a tenant or a credential supplied (attribute providers,
 * webhooks, status lists; checklist S-120, S-121, S-125): https unless OUTBOUND_ALLOW_HTTP, no
 * credentials in the URL, every connection's resolved address checked against the non-public
 * ranges at connect time, redirects refused, the whole exchange bounded by `timeoutMs`, and the
 * answer cut off past `maxResponseBytes`. Every failure is an `UpstreamError` whose detail names
 * `request.name` and never the answer's content.
 */
export function outboundFetch(
  url: string,
  init: OutboundRequest,
  policy: OutboundPolicy,
): Promise<OutboundResponse> {
  if (!tracingOn()) return fetchChecked(url, init, policy)
  const method = init.method ?? 'GET'
  // A client span (HTTP semantic conventions) whose context the request carries as `traceparent`.
  // The URL is left out: its path or query may hold a capability; the host and port say where.
  return inSpan(
    `${method} ${init.purpose ?? 'outbound'}`,
    async (span) => {
      const headers = { ...init.headers }
      injectTraceHeaders(headers)
      const response = await fetchChecked(url, { ...init, headers }, policy)
      span?.setAttribute('http.response.status_code', response.status)
      return response
    },
    { kind: 'client', attributes: () => clientAttributes(url, method, init) },
  )
}

function clientAttributes(url: string, method: string, init: OutboundRequest) {
  // checkOutboundUrl refuses what does not parse; the span is started before that check.
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  return {
    'http.request.method': method,
    'server.address': parsed?.hostname ?? '',
    'server.port': Number(parsed?.port || (parsed?.protocol === 'http:' ? 80 : 443)),
    'outbound.purpose': init.purpose ?? 'outbound',
    'outbound.name': init.name,
  }
}

async function fetchChecked(
  url: string,
  init: OutboundRequest,
  policy: OutboundPolicy,
): Promise<OutboundResponse> {
  const { name } = init
  const issues = checkOutboundUrl(url, policy, 'url')
  if (issues.length) throw new UpstreamError(`${name}: ${issues.map((i) => i.message).join('; ')}`)
  const loaded = await loadUndici()
  const signal = AbortSignal.timeout(init.timeoutMs)
  const agent = guardedAgent(loaded, policy, init.timeoutMs)
  try {
    const response = await loaded.request(url, {
      dispatcher: agent,
      method: init.method ?? 'GET',
      headers: init.headers,
      body: init.body,
      signal,
    })
    const { statusCode, headers, body } = response
    // 304 Not Modified answers a conditional request (If-None-Match): not a redirect.
    if (statusCode >= 300 && statusCode < 400 && statusCode !== 304) {
      abandon(body)
      throw new UpstreamError(`${name} answered a redirect (HTTP ${statusCode}), which is not followed`)
    }
    if (init.readBody === false) {
      abandon(body)
      return { status: statusCode, headers, body: Buffer.alloc(0) }
    }
    const maxBytes = init.maxBytes ?? policy.maxResponseBytes
    const tooLong = () => new UpstreamError(`${name} answered more than ${maxBytes} bytes`)
    if (Number(headers['content-length']) > maxBytes) {
      abandon(body)
      throw tooLong()
    }
    const chunks: Buffer[] = []
    let length = 0
    for await (const chunk of body as AsyncIterable<Buffer>) {
      length += chunk.length
      // Stop reading at the cap: an endless answer costs at most maxBytes of memory.
      if (length > maxBytes) {
        abandon(body)
        throw tooLong()
      }
      chunks.push(chunk)
    }
    return { status: statusCode, headers, body: Buffer.concat(chunks) }
  } catch (error) {
    if (error instanceof UpstreamError) throw error
    const refused = causeChain(error).find((e) => e instanceof AddressRefused)
    if (refused) throw new UpstreamError(`${name}: ${refused.message}`, { cause: error })
    if (signal.aborted)
      throw new UpstreamError(`${name} did not answer within ${init.timeoutMs} ms`, {
        cause: error,
        transient: true,
      })
    // A name that does not exist (NXDOMAIN) is not there later either; anything else may pass.
    const noSuchName = causeChain(error).some((e) => (e as NodeJS.ErrnoException).code === 'ENOTFOUND')
    throw new UpstreamError(`${name} could not be reached`, { cause: error, transient: !noSuchName })
  } finally {
    void agent.destroy().catch(() => undefined)
  }
}
