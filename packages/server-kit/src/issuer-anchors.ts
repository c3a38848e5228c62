import type { X509Certificate } from 'node:crypto'
import type { DcqlQuery, PresentationConfig } from '@credential-service/core-domain'
import { anchorAuthorityKeyIds, parseCertificate } from '@credential-service/crypto'
import type { KeyChainRow } from '@credential-service/db-schema'

/** Chains the service generated: it holds every key in them, so their root is the tenant's own. */
const GENERATED = new Set(['self-signed', 'internal-ca'])

/**
 * The certificates (PEM) one of the tenant's key chains adds to its issuer trust anchors. Of a
 * generated chain, its root (internal CA) or its self-signed leaf. Of a chain someone else
 * certified (`provided` by the user, `registrar`), only its own leaf: the last certificate of such
 * a chain is a CA that also certifies others (a public CA's root, a registrar's access CA), and
 * trusting it would accept whatever that CA's other customers sign.
 */
export function keyChainAnchors(row: KeyChainRow): string[] {
  const anchorOf = (chain: string[], mode: string | null) =>
    mode !== null && GENERATED.has(mode) ? chain.slice(-1) : chain.slice(0, 1)
  return [
    ...(row.rootCertificate ? [row.rootCertificate] : []),
    ...anchorOf(row.activeCertificates, row.certificateMode),
    ...anchorOf(row.previousCertificates ?? [], row.previousCertificateMode),
  ]
}

/**
 * The certificates a tenant trusts for credential issuers (HAIP 6.1.1, checklist V-32): the
 * configuration's trust anchors, its trust lists' current certificates (the verifier's
 * trust-lists.ts) and the tenant's own key chains (keyChainAnchors).
 */
export function issuerTrustAnchors(
  keyChains: KeyChainRow[],
  config: Pick<PresentationConfig, 'trustAnchors'>,
  listCertificates: string[] = [],
): X509Certificate[] {
  const pems = [...(config.trustAnchors ?? []), ...listCertificates, ...keyChains.flatMap(keyChainAnchors)]
  return pems.flatMap((pem) => {
    try {
      return [parseCertificate(pem)]
    } catch {
      return []
    }
  })
}

/**
 * The DCQL query a request carries: the configuration's, with `trustedAuthorities: from-anchors`
 * an `aki` Trusted Authorities Query (OpenID4VP 1.0 §6.1.1.1) naming the issuer trust anchors
 * added to every credential query that has none of its own, so wallets offer only credentials
 * from issuers this verifier trusts. The anchors still decide trust when the answer comes.
 */
export async function requestDcqlQuery(
  keyChains: KeyChainRow[],
  config: Pick<PresentationConfig, 'dcqlQuery' | 'trustAnchors' | 'trustedAuthorities'>,
): Promise<DcqlQuery> {
  if (config.trustedAuthorities !== 'from-anchors') return config.dcqlQuery
  const values = await anchorAuthorityKeyIds(issuerTrustAnchors(keyChains, config))
  if (values.length === 0) return config.dcqlQuery
  return {
    ...config.dcqlQuery,
    credentials: config.dcqlQuery.credentials.map((credential) =>
      credential.trusted_authorities
        ? credential
        : { ...credential, trusted_authorities: [{ type: 'aki', values }] },
    ),
  }
}
