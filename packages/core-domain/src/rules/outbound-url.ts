import type { ValidationIssue } from '../errors'

export interface OutboundUrlPolicy {
  /** Accept `http:` (development only). */
  allowHttp: boolean
  /** Host names or IP literals accepted even when private or loopback. */
  allowedHosts: readonly string[]
}

const LOCAL_NAMES = [
  /^localhost$/i,
  /\.localhost$/i,
  /\.local$/i,
  /\.internal$/i,
  /^metadata\.google\.internal$/i,
]

function ipv4Private(host: string): boolean {
  const parts = host.split('.').map(Number)
  if (parts.length !== 4 || parts.some((n) => !Number.isInteger(n) || n < 0 || n > 255)) return false
  const [a = 0, b = 0] = parts
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224
  )
}

function ipv6Private(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (!h.includes(':')) return false
  if (h === '::1' || h === '::') return true
  if (/^f[cd]/.test(h) || /^fe[89ab]/.test(h)) return true
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h)
  return mapped ? ipv4Private(mapped[1] as string) : false
}

/**
 * Where the service may send requests (attribute providers, webhooks): https, and no private,
 * loopback, link-local or cloud-metadata address, unless the policy allows it. Names are checked
 * as written here; the caller checks resolved addresses again when it connects.
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
  const host = parsed.hostname.toLowerCase()
  const allowed = policy.allowedHosts.some(
    (entry) => entry.toLowerCase() === host || `[${entry.toLowerCase()}]` === host,
  )
  if (!allowed && (ipv4Private(host) || ipv6Private(host) || LOCAL_NAMES.some((name) => name.test(host)))) {
    issues.push({
      path,
      message: `'${host}' is a private, loopback or internal address (allow it with OUTBOUND_ALLOWED_HOSTS)`,
    })
  }
  return issues
}
