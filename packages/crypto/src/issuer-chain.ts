import type { X509Certificate } from 'node:crypto'
import { parseCertificate } from './parsed-certificates'
import { PresentationRejected, type PresentationTrust, type QueryTrust } from './presentation'
import { trustedAuthoritiesRefusal } from './trusted-authorities'
import { checkChain } from './x5c-chain'

/**
 * The issuer's `x5c` of a JOSE-signed credential (SD-JWT VC §3.5, VC-JOSE-COSE §3.3), checked as
 * every format checks it (checklist V-32, HAIP 6.1.1): the chain to a trust anchor at `now`, unless
 * the configuration accepts any issuer (which still needs the leaf that signs), and the query's
 * `trusted_authorities`. Answers the parsed chain, leaf first; rejects with PresentationRejected.
 */
export async function trustedIssuerChain(
  x5c: unknown,
  trust: PresentationTrust & QueryTrust,
): Promise<[X509Certificate, ...X509Certificate[]]> {
  const chainProblem =
    trust.acceptAnyIssuer && Array.isArray(x5c) && x5c.length > 0
      ? undefined
      : await checkChain(x5c, trust.anchors, trust.now)
  if (chainProblem) throw new PresentationRejected(chainProblem)
  let chain: X509Certificate[]
  try {
    chain = (x5c as string[]).map((der) => parseCertificate(String(der)))
  } catch {
    throw new PresentationRejected('the x5c chain is not made of X.509 certificates')
  }
  const authorityProblem = await trustedAuthoritiesRefusal(chain, trust.trustedAuthorities, 'x5c', {
    byUrl: trust.trustedLists ?? new Map(),
    now: trust.now,
  })
  if (authorityProblem) throw new PresentationRejected(authorityProblem)
  return chain as [X509Certificate, ...X509Certificate[]]
}
