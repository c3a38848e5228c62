import type { X509Certificate } from 'node:crypto'
import { certificateFacts } from './certificate-facts'

/** A DCQL Trusted Authorities Query (OpenID4VP 1.0 §6.1.1). */
export interface TrustedAuthoritiesQuery {
  type: string
  values: string[]
}

/**
 * The `aki` value a credential issued under `anchor` carries in its chain (OpenID4VP 1.0
 * §6.1.1.1: the KeyIdentifier of an AuthorityKeyIdentifier in the chain, base64url). A CA anchor
 * appears as the authority of the certificates it issues, so its own subjectKeyIdentifier; a leaf
 * anchor (a self-signed key, or a key chain's own leaf) is itself in the chain, so the authority it
 * names. Undefined when the certificate lacks the extension.
 */
export async function anchorAuthorityKeyId(anchor: X509Certificate): Promise<string | undefined> {
  const facts = await certificateFacts(anchor)
  return facts.ca ? facts.subjectKeyId : (facts.authorityKeyId ?? facts.subjectKeyId)
}

/** The `aki` values of a set of anchors, each once, in order. */
export async function anchorAuthorityKeyIds(anchors: X509Certificate[]): Promise<string[]> {
  const ids = await Promise.all(anchors.map(anchorAuthorityKeyId))
  return [...new Set(ids.filter((id) => id !== undefined))]
}

/**
 * Whether a credential's issuer chain (its `x5c` or `x5chain` as presented, leaf first) matches a
 * query's `trusted_authorities` (OpenID4VP 1.0 §6.1.1): some certificate of the chain has an
 * AuthorityKeyIdentifier whose KeyIdentifier is one of the `aki` values. Only `aki` is evaluated;
 * configurations with other types are refused at save. Returns the refusal, or undefined.
 */
export async function trustedAuthoritiesRefusal(
  chain: X509Certificate[],
  queries: TrustedAuthoritiesQuery[] | undefined,
  name = 'x5c',
): Promise<string | undefined> {
  if (!queries?.length) return undefined
  const named = new Set(queries.filter((query) => query.type === 'aki').flatMap((query) => query.values))
  for (const certificate of chain) {
    const id = (await certificateFacts(certificate)).authorityKeyId
    if (id !== undefined && named.has(id)) return undefined
  }
  return `no certificate of the ${name} chain has an authority key identifier the query's trusted_authorities name (aki ${[...named].join(', ')})`
}
