import { UpstreamError } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'
import { type OutboundPolicy, outboundFetch } from './outbound-fetch'
import { authHeaders, type OutboundEndpoint } from './outbound-http'

export interface AttributeRequest {
  tenantId: string
  sessionId: string
  credentialConfigurationId: string
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
): Promise<Record<string, unknown>> {
  const name = `attribute provider '${provider.id}'`
  const body = JSON.stringify(request)
  const response = await outboundFetch(
    provider.url,
    {
      name,
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
  return json as Record<string, unknown>
}
