import type { ValidationIssue } from '../errors'
import { isIpAddress, nonPublicRange } from './ip-address'

export interface OutboundUrlPolicy {
  /** Accept `http:` (development only). */
  allowHttp: boolean
  /** Host names or IP literals accepted even when private or loopback. */
  allowedHosts: readonly string[]
}

/** Names that never leave the host or the site network (RFC 6761, RFC 6762, RFC 8375, cloud metadata). */
const LOCAL_NAMES = [
  /^localhost$/,
  /\.localhost$/,
  /\.local$/,
  /\.localdomain$/,
  /\.internal$/,
  /\.home\.arpa$/,
]

/**
 * A host as compared everywhere: lowercase, without IPv6 brackets, without the trailing dots of a
 * fully-qualified name (`localhost.` is `localhost` to DNS).
 */
export function normalizeHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
}

/** True when OUTBOUND_ALLOWED_HOSTS names this host (or IP literal). */
export function isAllowedHost(host: string, policy: OutboundUrlPolicy): boolean {
  const normalized = normalizeHost(host)
  return policy.allowedHosts.some((entry) => normalizeHost(entry) === normalized)
}

/**
 * Why a host as written must not be called: an internal name or a non-public IP literal (in any
 * form: WHATWG URL parsing has already turned `2130706433`, `0x7f000001` and `127.1` into
 * `127.0.0.1`), or `undefined`.
 */
function internalHost(host: string): string | undefined {
  const normalized = normalizeHost(host)
  if (isIpAddress(normalized)) {
    const range = nonPublicRange(normalized)
    return range ? `a non-public address (${range})` : undefined
  }
  return LOCAL_NAMES.some((name) => name.test(normalized)) ? 'an internal name' : undefined
}

/**
 * Where the service may send requests (attribute providers, webhooks, status lists): https, and
 * no private, loopback, link-local, multicast or cloud-metadata address, unless the policy allows
 * it. This checks the URL as written, when it is saved; server-kit's `outboundFetch` checks the
 * resolved address of every connection again.
 */
export function checkOutboundUrl(
  url: string,
  policy: OutboundUrlPolicy,
  path = 'body.url',
): ValidationIssue[] {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return [{ path, message: 'not an absolute URL' }]
  }
  const issues: ValidationIssue[] = []
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    issues.push({ path, message: policy.allowHttp ? 'must be http(s)' : 'must use https' })
  }
  if (parsed.username || parsed.password)
    issues.push({ path, message: 'must not carry credentials; use auth' })
  const internal = isAllowedHost(parsed.hostname, policy) ? undefined : internalHost(parsed.hostname)
  if (internal) {
    issues.push({
      path,
      message: `'${parsed.hostname}' is ${internal}; allow it with OUTBOUND_ALLOWED_HOSTS`,
    })
  }
  return issues
}
