import { createHmac } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { checkOutboundUrl, type OutboundUrlPolicy, UpstreamError } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'

/** An attribute provider or webhook endpoint row, as far as calling it goes. */
export interface OutboundEndpoint {
  tenantId: string
  id: string
  url: string
  authType: string
  authHeader: string | null
  authSecret: string | null
}

/**
 * Refuses a host that resolves to a private, loopback or link-local address (DNS rebinding:
 * the name was checked when the endpoint was saved, the address is checked now).
 */
export async function assertPublicAddress(url: URL, policy: OutboundUrlPolicy, name: string): Promise<void> {
  if (policy.allowedHosts.includes(url.hostname)) return
  const addresses = await lookup(url.hostname, { all: true }).catch(() => [])
  for (const { address } of addresses) {
    const literal = address.includes(':') ? `[${address}]` : address
    if (checkOutboundUrl(`https://${literal}/`, { allowHttp: true, allowedHosts: [] }).length) {
      throw new UpstreamError(`${name}: ${url.hostname} resolves to a private or loopback address`)
    }
  }
}

/**
 * Authentication headers for a request body: the API key header, or `X-Timestamp` and
 * `X-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`.
 */
export function authHeaders(
  endpoint: OutboundEndpoint,
  kind: string,
  body: string,
  cipher: JwkCipher,
): Record<string, string> {
  if (!endpoint.authSecret) return {}
  const secret = cipher.decrypt<string>(endpoint.authSecret, `${kind}:${endpoint.tenantId}/${endpoint.id}`)
  if (endpoint.authType === 'api-key') return { [endpoint.authHeader ?? 'x-api-key']: secret }
  if (endpoint.authType === 'hmac') {
    const timestamp = String(Math.floor(Date.now() / 1000))
    return {
      'x-timestamp': timestamp,
      'x-signature': `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
    }
  }
  return {}
}
