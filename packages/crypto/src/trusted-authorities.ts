import type { X509Certificate } from 'node:crypto'
import { certificateFacts } from './certificate-facts'
import { ISSUER_PROFILE, validatePath } from './path-validation'

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
 * A trusted list an `etsi_tl` query may name (OpenID4VP 1.0 §6.1.1.2), as the verifier holds it at
 * the time of the answer: its current certificates, or why it contributes none (fail closed).
 */
export interface TrustedListAnchors {
  /** The list's current certificates: the anchors a matching chain must validate to. */
  anchors: X509Certificate[]
  /** Why the list contributes no certificates (past NextUpdate + grace, not fetched yet). */
  unusable?: string | undefined
}

/** The trusted lists of a configuration by URL, and the time their path validation uses. */
export interface TrustedLists {
  byUrl: ReadonlyMap<string, TrustedListAnchors>
  now: Date
}

/** Why `chain` does not validate to a current certificate of the trusted list at `url`, or undefined. */
async function trustedListRefusal(
  chain: X509Certificate[],
  url: string,
  lists: TrustedLists | undefined,
): Promise<string> {
  const list = lists?.byUrl.get(url)
  if (!list) return `etsi_tl ${url} is not a trusted list of this configuration`
  if (list.unusable)
    return `the trusted list ${url} is ${list.unusable} and contributes no certificates (fail closed)`
  // The same path validation as the tenant's anchors, with the list's certificates as the anchors.
  const validation = await validatePath({
    chain,
    anchors: list.anchors,
    now: (lists as TrustedLists).now,
    profile: ISSUER_PROFILE,
  })
  if (validation.valid) return ''
  return `the issuer does not chain to a current certificate of the trusted list ${url}${validation.untrusted ? '' : ` (${validation.reason})`}`
}

/**
 * Whether a credential's issuer chain (its `x5c` or `x5chain` as presented, leaf first) matches a
 * query's `trusted_authorities` (OpenID4VP 1.0 §6.1.1: any one of them). `aki` (§6.1.1.1): some
 * certificate of the chain has an AuthorityKeyIdentifier whose KeyIdentifier is one of the values.
 * `etsi_tl` (§6.1.1.2): the chain validates to a current certificate of the configuration's trusted
 * list at that URL (`lists`). Configurations with other types are refused at save. Returns the
 * refusal, or undefined.
 */
export async function trustedAuthoritiesRefusal(
  chain: X509Certificate[],
  queries: TrustedAuthoritiesQuery[] | undefined,
  name = 'x5c',
  lists?: TrustedLists,
): Promise<string | undefined> {
  if (!queries?.length) return undefined
  const named = new Set(queries.filter((query) => query.type === 'aki').flatMap((query) => query.values))
  for (const certificate of chain) {
    const id = (await certificateFacts(certificate)).authorityKeyId
    if (id !== undefined && named.has(id)) return undefined
  }
  const akiRefusal = `no certificate of the ${name} chain has an authority key identifier the query's trusted_authorities name (aki ${[...named].join(', ')})`
  const urls = queries.filter((query) => query.type === 'etsi_tl').flatMap((query) => query.values)
  // openid_federation (§6.1.1) names federation entities: an issuer known by its x5c chain is none.
  if (!urls.length && !named.size)
    return `the issuer comes with an ${name} chain, which the query's trusted_authorities (openid_federation) do not name`
  if (!urls.length) return akiRefusal
  const refusals = named.size ? [akiRefusal] : []
  for (const url of new Set(urls)) {
    const refusal = await trustedListRefusal(chain, url, lists)
    if (!refusal) return undefined
    refusals.push(refusal)
  }
  return `the ${name} chain matches none of the query's trusted_authorities (OpenID4VP 1.0 §6.1.1): ${refusals.join('; ')}`
}
