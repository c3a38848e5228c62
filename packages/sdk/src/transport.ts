/** Per-call options of every operation. */
export interface CallOptions {
  /** Aborts the request; the promise then rejects with the signal's reason, not a ManagementApiError. */
  signal?: AbortSignal
  /** Extra request headers, e.g. a correlation id for your logs. */
  headers?: Record<string, string>
}

/** Per-call options of an event stream. */
export interface StreamOptions extends CallOptions {
  /** Resumes after this event (`Last-Event-ID`): the server skips what the client has seen. */
  lastEventId?: string
}

/** How one operation is called (generated from the OpenAPI description). */
export interface OperationSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** OpenAPI path template, e.g. `/api/tenants/{tenantId}`. */
  path: string
  /** Names of the `{…}` path parameters, in path order: the first arguments of the method. */
  pathParams: readonly string[]
  body: 'none' | 'required' | 'optional'
  /** Whether the method takes a query object after the body. */
  query: boolean
  /** Whether the operation needs an access token (it lists roles in the description). */
  auth: boolean
  /** The answer is text (e.g. Prometheus metrics), returned as a string; JSON when absent. */
  text?: boolean
  /** The answer is Server-Sent Events, read as an async iterable of events. */
  stream?: boolean
}

export interface CallRequest {
  spec: OperationSpec
  pathValues: string[]
  body: unknown
  query: Record<string, unknown> | undefined
  options: CallOptions | undefined
}

/** Splits a generated method's positional arguments by its operation spec. */
export function callRequest(spec: OperationSpec, args: unknown[]): CallRequest {
  let next = 0
  const pathValues = spec.pathParams.map((name) => {
    const value = args[next++]
    if (typeof value !== 'string' || value === '')
      throw new TypeError(`${spec.method} ${spec.path}: ${name} must be a non-empty string`)
    return value
  })
  const body = spec.body === 'none' ? undefined : args[next++]
  const query = spec.query ? (args[next++] as Record<string, unknown> | undefined) : undefined
  return { spec, pathValues, body, query, options: args[next] as CallOptions | undefined }
}

/** The request URL: path parameters percent-encoded, undefined query members left out. */
export function requestUrl(baseUrl: string, request: CallRequest): string {
  let index = 0
  const path = request.spec.path.replace(/\{[^}]+\}/g, () =>
    encodeURIComponent(request.pathValues[index++] as string),
  )
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(request.query ?? {}))
    if (value !== undefined && value !== null) search.set(name, String(value))
  const query = search.toString()
  return `${baseUrl}${path}${query ? `?${query}` : ''}`
}
