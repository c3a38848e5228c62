import { UpstreamError } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'
import { type OutboundPolicy, outboundFetch } from './outbound-fetch'
import { authHeaders, type OutboundEndpoint } from './outbound-http'

export interface AttributeRequest {
  tenantId: string
  sessionId: string
  credentialConfigurationId: string
  /** The holder who logged in (authorization code flow): upstream issuer, subject and claims. */
  user?: { issuer: string; sub: string; claims: Record<string, unknown> }
  /**
   * The credential the holder presented to log in (presentation during issuance): the
   * presentation configuration and the verified claims per DCQL credential query id.
   */
  presentation?: { presentationConfigId: string; credentials: Record<string, Record<string, unknown>[]> }
}

/**
 * What an attribute provider answered: the claims (HTTP 200, a JSON object), or "not yet" (HTTP 202,
 * optionally `{"status":"pending","interval":<seconds>}`), which defers the issuance (OpenID4VCI §9).
 */
export type AttributeAnswer =
  | { status: 'claims'; claims: Record<string, unknown> }
  | {
      status: 'pending'
      /** Seconds the provider suggests between retries; undefined: our default. */
      interval: number | undefined
    }

/**
 * Asks an attribute provider for the claims of one credential: `POST <url>` with the request as
 * JSON and the endpoint's authentication, under the outbound policy (checked address, no
 * redirects, the provider's timeout, OUTBOUND_MAX_RESPONSE_BYTES); the caller validates the answer.
 */
export async function fetchAttributes(
  provider: OutboundEndpoint & { timeoutMs: number },
  request: AttributeRequest,
  deps: { cipher: JwkCipher; outbound: OutboundPolicy },
): Promise<AttributeAnswer> {
  const name = `attribute provider '${provider.id}'`
  const body = JSON.stringify(request)
  const response = await outboundFetch(
    provider.url,
    {
      name,
      purpose: 'attribute-provider',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...authHeaders(provider, 'attribute-provider', body, deps.cipher),
      },
      body,
      timeoutMs: provider.timeoutMs,
    },
    deps.outbound,
  )
  if (response.status === 202) return { status: 'pending', interval: pendingInterval(response.body) }
  if (response.status < 200 || response.status >= 300)
    throw new UpstreamError(`${name} answered HTTP ${response.status}`)
  let json: unknown
  try {
    json = JSON.parse(response.body.toString('utf8'))
  } catch {
    json = undefined
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new UpstreamError(`${name} did not answer a JSON object`)
  return { status: 'claims', claims: json as Record<string, unknown> }
}

/** The `interval` of a 202 body, when it is a positive whole number of seconds; the body may be empty. */
function pendingInterval(body: Buffer): number | undefined {
  try {
    const interval = (JSON.parse(body.toString('utf8')) as { interval?: unknown }).interval
    return typeof interval === 'number' && Number.isInteger(interval) && interval > 0 ? interval : undefined
  } catch {
    return undefined
  }
}
