import type { ValidationIssue } from '../errors'
import type { OutboundUrlPolicy } from './outbound-url'

/**
 * Where a wallet may send the user after a same-device presentation (OpenID4VP §8.2
 * `redirect_uri`): an https URL. The wallet opens it in a browser with the response code, so a
 * `javascript:` or `data:` URI would run script in the user's session and any other scheme could
 * hand the code to whatever app claims it; http only where OUTBOUND_ALLOW_HTTP is set (development).
 * No fragment, because the response code is appended as one, and no credentials.
 */
export function checkRedirectUri(
  uri: string,
  policy: Pick<OutboundUrlPolicy, 'allowHttp'>,
  path: string,
): ValidationIssue[] {
  let parsed: URL
  try {
    parsed = new URL(uri)
  } catch {
    return [{ path, message: 'not an absolute URL' }]
  }
  const issues: ValidationIssue[] = []
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    issues.push({
      path,
      message: `must use https${policy.allowHttp ? ' or http' : ''}, not '${parsed.protocol.replace(/:$/, '')}'`,
    })
  }
  if (parsed.username || parsed.password) issues.push({ path, message: 'must not carry credentials' })
  if (parsed.hash || uri.includes('#'))
    issues.push({ path, message: 'must not carry a fragment (the response code is appended as one)' })
  return issues
}
