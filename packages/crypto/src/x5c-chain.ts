import type { X509Certificate } from 'node:crypto'
import { parseCertificate } from './parsed-certificates'
import { ISSUER_PROFILE, type PathProfile, validatePath } from './path-validation'

/**
 * Path validation of an `x5c` or `x5chain` (base64 DER, leaf first) at `now` against the tenant's
 * anchors (validatePath: RFC 5280 §6.1, checklist S-127). The anchor may be sent along (SD-JWT VC
 * §3.5 does not forbid it); a certificate that is itself an anchor ends the path. Returns the
 * failure, or undefined.
 */
export async function checkChain(
  x5c: unknown,
  anchors: X509Certificate[],
  now: Date,
  profile: PathProfile = ISSUER_PROFILE,
): Promise<string | undefined> {
  if (!Array.isArray(x5c) || x5c.length === 0) return 'the credential has no x5c certificate chain'
  let chain: X509Certificate[]
  try {
    chain = x5c.map((der) => parseCertificate(String(der)))
  } catch {
    return 'the x5c chain is not made of X.509 certificates'
  }
  const validation = await validatePath({ chain, anchors, now, profile })
  if (validation.valid) return undefined
  return validation.untrusted
    ? 'the issuer does not chain to a trust anchor of this tenant'
    : validation.reason
}
