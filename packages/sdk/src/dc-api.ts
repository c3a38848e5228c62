import { parseJson } from './errors.js'
import type { PresentationRequestCreated } from './generated/types.js'

/** The `dcApi` of a presentation request created with `transport: 'dc-api'`. */
export type DcApiRequest = NonNullable<PresentationRequestCreated['dcApi']>

/**
 * Why the page falls back to the QR code / link: `unavailable` when the browser has no Digital
 * Credentials API (or no window at all), `not-supported` when it has one but refuses every offered
 * protocol (`userAgentAllowsProtocol`, or a NotSupportedError from `navigator.credentials.get`).
 */
export type DcApiFallbackReason = 'unavailable' | 'not-supported'

export type DcApiOutcome =
  | { kind: 'answered'; protocol: string }
  | { kind: 'fallback'; reason: DcApiFallbackReason }

export interface PresentWithDigitalCredentialsOptions {
  dcApi: DcApiRequest
  /** Shows the request another way, e.g. `authorizationRequestUri` as a QR code; awaited. */
  fallback: (reason: DcApiFallbackReason) => void | Promise<void>
  /** Aborts the browser's credential picker; an answer the wallet gave is still posted. */
  signal?: AbortSignal
  /** For tests and non-standard runtimes; the global `fetch` by default. */
  fetch?: typeof fetch
}

/** The response endpoint refused the answer (or failed): its OAuth `error` and `error_description`. */
export class DcApiResponseError extends Error {
  readonly status: number
  /** The OAuth error code, e.g. `invalid_request`; `http_<status>` for an answer without one. */
  readonly error: string
  readonly errorDescription: string | undefined

  constructor(status: number, error: string, errorDescription?: string) {
    super(`Digital Credentials API response refused: ${status} ${errorDescription ?? error}`)
    this.name = 'DcApiResponseError'
    this.status = status
    this.error = error
    this.errorDescription = errorDescription
  }
}

// The DOM's own types are not assumed: the SDK is typechecked (and imported) without them.
interface DigitalCredentialGlobal {
  userAgentAllowsProtocol?: (protocol: string) => boolean
}
interface CredentialsContainer {
  get(options: Record<string, unknown>): Promise<unknown>
}
interface BrowserGlobals {
  window?: unknown
  DigitalCredential?: DigitalCredentialGlobal
  navigator?: { credentials?: Partial<CredentialsContainer> }
}

function browserApi(): {
  DigitalCredential: DigitalCredentialGlobal
  credentials: CredentialsContainer
} | null {
  const page = globalThis as BrowserGlobals
  const credentials = page.navigator?.credentials
  if (page.window === undefined || !page.DigitalCredential || typeof credentials?.get !== 'function')
    return null
  return { DigitalCredential: page.DigitalCredential, credentials: credentials as CredentialsContainer }
}

/** Whether this page can call `navigator.credentials.get({ digital })` (W3C Digital Credentials API). */
export function digitalCredentialsSupported(): boolean {
  return browserApi() !== null
}

/**
 * Asks the browser for a presentation of `dcApi.requests` and posts its answer to
 * `dcApi.responseUri`; calls `fallback` instead where the API or the protocols are missing. The
 * result itself reaches the page's backend as for any presentation (session, webhook). A user who
 * closes the picker rejects with the browser's DOMException (NotAllowedError, AbortError).
 */
export async function presentWithDigitalCredentials(
  options: PresentWithDigitalCredentialsOptions,
): Promise<DcApiOutcome> {
  const fallback = async (reason: DcApiFallbackReason): Promise<DcApiOutcome> => {
    await options.fallback(reason)
    return { kind: 'fallback', reason }
  }
  const api = browserApi()
  if (!api) return fallback('unavailable')
  const allows = api.DigitalCredential.userAgentAllowsProtocol
  const requests = options.dcApi.requests.filter(
    (request) => typeof allows !== 'function' || allows.call(api.DigitalCredential, request.protocol),
  )
  if (requests.length === 0) return fallback('not-supported')
  let credential: unknown
  try {
    credential = await api.credentials.get({
      mediation: 'required',
      digital: { requests },
      ...(options.signal ? { signal: options.signal } : {}),
    })
  } catch (error) {
    if ((error as { name?: unknown } | null)?.name === 'NotSupportedError') return fallback('not-supported')
    throw error
  }
  const answer = readAnswer(credential, requests)
  await postAnswer(options, answer)
  return { kind: 'answered', protocol: answer.protocol }
}

/** The DigitalCredential's `protocol` and `data`; older browsers hand `data` as a JSON string. */
function readAnswer(credential: unknown, requests: DcApiRequest['requests']) {
  const { protocol, data } = (credential ?? {}) as { protocol?: unknown; data?: unknown }
  const parsed = typeof data === 'string' ? parseJson(data) : data
  if (typeof protocol !== 'string' || !requests.some((request) => request.protocol === protocol))
    throw new TypeError(`the browser answered no requested protocol: ${String(protocol)}`)
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new TypeError('the browser answered without a JSON object as data')
  return { protocol, data: parsed }
}

async function postAnswer(options: PresentWithDigitalCredentialsOptions, answer: { protocol: string }) {
  const response = await (options.fetch ?? fetch)(options.dcApi.responseUri, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(answer),
  })
  if (response.ok) return
  const body = parseJson(await response.text().catch(() => '')) as {
    error?: unknown
    error_description?: unknown
  } | null
  const error = typeof body?.error === 'string' ? body.error : `http_${response.status}`
  const description = typeof body?.error_description === 'string' ? body.error_description : undefined
  throw new DcApiResponseError(response.status, error, description)
}
