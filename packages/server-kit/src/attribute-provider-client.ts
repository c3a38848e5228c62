import { type OutboundUrlPolicy, UpstreamError } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'
import { assertPublicAddress, authHeaders, type OutboundEndpoint } from './outbound-http'

export interface AttributeRequest {
  tenantId: string
  sessionId: string
  credentialConfigurationId: string
}

/**
 * Asks an attribute provider for the claims of one credential: `POST <url>` with the request as
 * JSON and the endpoint's authentication; the caller validates the answer.
 */
export async function fetchAttributes(
  provider: OutboundEndpoint & { timeoutMs: number },
  request: AttributeRequest,
  deps: { cipher: JwkCipher; outbound: OutboundUrlPolicy; fetch?: typeof fetch },
): Promise<Record<string, unknown>> {
  const name = `attribute provider '${provider.id}'`
  const url = new URL(provider.url)
  await assertPublicAddress(url, deps.outbound, name)
  const body = JSON.stringify(request)
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...authHeaders(provider, 'attribute-provider', body, deps.cipher),
  }
  let response: Response
  try {
    response = await (deps.fetch ?? fetch)(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(provider.timeoutMs),
    })
  } catch (cause) {
    throw new UpstreamError(`${name} could not be reached`, { cause })
  }
  const json = (await response.json().catch(() => undefined)) as unknown
  if (!response.ok) throw new UpstreamError(`${name} answered HTTP ${response.status}`)
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new UpstreamError(`${name} did not answer a JSON object`)
  return json as Record<string, unknown>
}
