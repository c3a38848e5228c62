import { errorFromResponse, ManagementApiError, parseJson } from './errors.js'
import { readEventStream, type ServerSentEvent, TOKEN_EXPIRED_EVENT } from './events.js'
import { type ManagementOperations, OPERATIONS } from './generated/operations.js'
import type {
  IssuanceSession,
  OfferCreate,
  OfferCreated,
  PresentationRequestCreate,
  PresentationRequestCreated,
  PresentationSession,
  Session,
} from './generated/types.js'
import { createTokenSource } from './token.js'
import { type CallRequest, callRequest, requestUrl, type StreamOptions } from './transport.js'
import { type WaitForSessionOptions, waitForSession } from './wait.js'

interface CommonOptions {
  /** Base URL of the service, e.g. `https://credentials.example.com` (the API is under `/api`). */
  baseUrl: string
  /** Defaults to the global `fetch` (Node 20 and later, browsers). */
  fetch?: typeof fetch
  /** Clock for token expiry, in milliseconds; `Date.now` when absent. */
  now?: () => number
}

/** Tokens by the client credentials grant, cached until shortly before they expire. */
export interface ClientCredentialsOptions extends CommonOptions {
  clientId: string
  clientSecret: string
  /**
   * Token endpoint: `{baseUrl}/api/oauth2/token` (the built-in token server) when absent; the
   * identity provider's token endpoint in external OIDC mode.
   */
  tokenUrl?: string
}

/** Tokens you obtain yourself; called before every request that needs one. */
export interface AccessTokenOptions extends CommonOptions {
  accessToken: () => string | Promise<string>
}

export type ManagementClientOptions = ClientCredentialsOptions | AccessTokenOptions

export interface ManagementClient extends ManagementOperations {
  /**
   * Polls `getSession` (or `getSessionOfTenant` with `tenantId`) until the session reaches one of
   * `until` (by default a final status). Rejects with a `SessionWaitError` on timeout or when the
   * session ends in another status, and with a `ManagementApiError` when a poll fails.
   */
  waitForSession(sessionId: string, options?: WaitForSessionOptions): Promise<Session>
  /**
   * Creates an offer (`createOffer`, or `createOfferOfTenant` with `tenantId`), hands it to
   * `onOffer` (show `offerUri` as a QR code or link; the tx_code is only in this answer), then
   * waits until the session is `completed`. Rejects as `waitForSession` does.
   */
  issueAndWait(
    body: OfferCreate,
    options: WaitForSessionOptions & { onOffer: (offer: OfferCreated) => void | Promise<void> },
  ): Promise<{ offer: OfferCreated; session: IssuanceSession }>
  /**
   * Creates a presentation request, hands it to `onRequest` (show its URI or open its link), then
   * waits until the session is `verified` (its claims are on the session). Rejects as
   * `waitForSession` does, with the failed session when the presentation was refused.
   */
  verifyAndWait(
    body: PresentationRequestCreate,
    options: WaitForSessionOptions & {
      onRequest: (request: PresentationRequestCreated) => void | Promise<void>
    },
  ): Promise<{ request: PresentationRequestCreated; session: PresentationSession }>
}

/**
 * Typed client of the management API: one method per OpenAPI `operationId`. Every answer other
 * than 2xx rejects with a `ManagementApiError`.
 */
export function createManagementClient(options: ManagementClientOptions): ManagementClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init))
  const now = options.now ?? Date.now
  const tokens =
    'accessToken' in options
      ? undefined
      : createTokenSource({
          tokenUrl: options.tokenUrl ?? `${baseUrl}/api/oauth2/token`,
          clientId: options.clientId,
          clientSecret: options.clientSecret,
          fetch: doFetch,
          now,
        })
  const accessToken = async (signal: AbortSignal | undefined) =>
    tokens ? tokens.get(signal) : await (options as AccessTokenOptions).accessToken()

  /** Sends the request; answers the 2xx response, rejects with a ManagementApiError otherwise. */
  async function respond(request: CallRequest, accept: string, retried = false): Promise<Response> {
    const { spec, options: call } = request
    const url = requestUrl(baseUrl, request)
    const token = spec.auth ? await accessToken(call?.signal) : undefined
    const hasBody = request.body !== undefined
    const lastEventId = (call as StreamOptions | undefined)?.lastEventId
    let response: Response
    try {
      response = await doFetch(url, {
        method: spec.method,
        headers: {
          accept,
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
          ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
          ...call?.headers,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        ...(hasBody ? { body: JSON.stringify(request.body) } : {}),
        ...(call?.signal ? { signal: call.signal } : {}),
      })
    } catch (error) {
      if (call?.signal?.aborted) throw error
      throw new ManagementApiError('network_error', { method: spec.method, url, status: 0, cause: error })
    }
    // A cached token the API no longer accepts (e.g. the signing key changed): one fresh try.
    if (response.status === 401 && token && tokens && !retried) {
      tokens.invalidate(token)
      await response.body?.cancel()
      return respond(request, accept, true)
    }
    if (!response.ok) throw await errorFromResponse(spec.method, url, response)
    return response
  }

  async function send(request: CallRequest): Promise<unknown> {
    const { spec } = request
    const response = await respond(
      request,
      spec.text ? 'text/plain, application/problem+json' : 'application/json, application/problem+json',
    )
    const text = await response.text()
    if (spec.text) return text
    if (response.status === 204 || text === '') return undefined
    const body = parseJson(text)
    if (body === undefined)
      throw new ManagementApiError('invalid_response', {
        method: spec.method,
        url: requestUrl(baseUrl, request),
        status: response.status,
        body: text,
      })
    return body
  }

  /**
   * The events of a stream. When the server ends it because the access token expired
   * (`event: token-expired`), the stream is opened again with a fresh token and `Last-Event-ID`,
   * so the caller sees one stream without that event.
   */
  async function* stream(request: CallRequest): AsyncGenerator<ServerSentEvent> {
    let lastEventId = (request.options as StreamOptions | undefined)?.lastEventId
    for (;;) {
      const options: StreamOptions = { ...request.options, ...(lastEventId ? { lastEventId } : {}) }
      const response = await respond({ ...request, options }, 'text/event-stream, application/problem+json')
      const type = response.headers.get('content-type') ?? ''
      if (!type.startsWith('text/event-stream') || !response.body) {
        await response.body?.cancel()
        throw new ManagementApiError('invalid_response', {
          method: request.spec.method,
          url: requestUrl(baseUrl, request),
          status: response.status,
          body: `expected text/event-stream, got ${type || 'no content type'}`,
        })
      }
      let expired = false
      for await (const event of readEventStream(response.body)) {
        if (event.event === TOKEN_EXPIRED_EVENT) {
          expired = true
          break
        }
        lastEventId = event.id ?? lastEventId
        yield event
      }
      if (!expired) return
    }
  }

  const client: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(OPERATIONS))
    client[name] = spec.stream
      ? (...args: unknown[]) => stream(callRequest(spec, args))
      : (...args: unknown[]) => send(callRequest(spec, args))
  const operations = client as unknown as ManagementOperations
  client.waitForSession = (sessionId: string, wait: WaitForSessionOptions = {}) =>
    waitForSession(
      (signal) =>
        wait.tenantId === undefined
          ? operations.getSession(sessionId, { ...(signal ? { signal } : {}) })
          : operations.getSessionOfTenant(wait.tenantId, sessionId, { ...(signal ? { signal } : {}) }),
      wait,
      (signal) =>
        wait.tenantId === undefined
          ? operations.streamSessionEvents(sessionId, { signal })
          : operations.streamSessionEventsOfTenant(wait.tenantId, sessionId, { signal }),
    )
  const managed = client as unknown as ManagementClient
  /** Creates a session's start (offer or request), hands it over, then waits for `until`. */
  async function startAndWait<T extends { sessionId: string }, S extends Session>(
    create: (call: { signal?: AbortSignal }) => Promise<T>,
    handOver: (started: T) => void | Promise<void>,
    until: S['status'],
    wait: WaitForSessionOptions,
  ): Promise<{ started: T; session: S }> {
    const started = await create(wait.signal ? { signal: wait.signal } : {})
    await handOver(started)
    // An offer's session is an issuance one, a request's a presentation one, and only those
    // reach `until`.
    const session = await managed.waitForSession(started.sessionId, { until, ...wait })
    return { started, session: session as S }
  }
  client.issueAndWait = async (
    body: OfferCreate,
    { onOffer, ...wait }: Parameters<ManagementClient['issueAndWait']>[1],
  ) => {
    const { tenantId } = wait
    const { started, session } = await startAndWait<OfferCreated, IssuanceSession>(
      (call) =>
        tenantId === undefined
          ? operations.createOffer(body, call)
          : operations.createOfferOfTenant(tenantId, body, call),
      onOffer,
      'completed',
      wait,
    )
    return { offer: started, session }
  }
  client.verifyAndWait = async (
    body: PresentationRequestCreate,
    { onRequest, ...wait }: Parameters<ManagementClient['verifyAndWait']>[1],
  ) => {
    const { tenantId } = wait
    const { started, session } = await startAndWait<PresentationRequestCreated, PresentationSession>(
      (call) =>
        tenantId === undefined
          ? operations.createPresentationRequest(body, call)
          : operations.createPresentationRequestOfTenant(tenantId, body, call),
      onRequest,
      'verified',
      wait,
    )
    return { request: started, session }
  }
  return managed
}
