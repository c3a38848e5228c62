import { createHmac } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { checkOutboundUrl, type OutboundUrlPolicy, UpstreamError } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'
import type { AttributeProviderRow } from '@credential-service/db-schema'

export interface AttributeRequest {
  tenantId: string
  sessionId: string
  credentialConfigurationId: string
}

/**
 * Asks an attribute provider for the claims of one credential: `POST <url>` with the request as JSON,
 * authenticated by API key header or by `X-Signature: sha256=<HMAC of "<timestamp>.<body>">` with
 * `X-Timestamp`. The resolved address is checked against the outbound policy before connecting.
 */
export async function fetchAttributes(
  provider: AttributeProviderRow,
  request: AttributeRequest,
  deps: { cipher: JwkCipher; outbound: OutboundUrlPolicy; fetch?: typeof fetch },
): Promise<Record<string, unknown>> {
  const name = `attribute provider '${provider.id}'`
  const url = new URL(provider.url)
  const allowed = deps.outbound.allowedHosts.includes(url.hostname)
  if (!allowed) {
    const addresses = await lookup(url.hostname, { all: true }).catch(() => [])
    for (const { address } of addresses) {
      const literal = address.includes(':') ? `[${address}]` : address
      if (checkOutboundUrl(`https://${literal}/`, { allowHttp: true, allowedHosts: [] }).length) {
        throw new UpstreamError(`${name}: ${url.hostname} resolves to a private or loopback address`)
      }
    }
  }
  const body = JSON.stringify(request)
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  const context = `attribute-provider:${provider.tenantId}/${provider.id}`
  if (provider.authType === 'api-key' && provider.authSecret) {
    headers[provider.authHeader ?? 'x-api-key'] = deps.cipher.decrypt<string>(provider.authSecret, context)
  } else if (provider.authType === 'hmac' && provider.authSecret) {
    const timestamp = String(Math.floor(Date.now() / 1000))
    const secret = deps.cipher.decrypt<string>(provider.authSecret, context)
    headers['x-timestamp'] = timestamp
    headers['x-signature'] =
      `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
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
