import type { X509Certificate } from 'node:crypto'
import {
  type DcqlQuery,
  FEDERATED_ISSUER_FORMATS,
  type PresentationConfig,
} from '@credential-service/core-domain'
import { anchorAuthorityKeyIds, parseCertificate } from '@credential-service/crypto'
import type { KeyChainRow, TrustListRow } from '@credential-service/db-schema'
import { trustListState } from '@credential-service/db-schema'
import { federationTrustSources } from './federation/federated-trust'

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
 * current certificates of the configuration's trust lists (trustListCertificates) and the
 * tenant's own key chains (keyChainAnchors). Issue 25: PEM anchors are trust lists now.
 */
export function issuerTrustAnchors(
  keyChains: KeyChainRow[],
  listCertificates: string[] = [],
): X509Certificate[] {
  const pems = [...listCertificates, ...keyChains.flatMap(keyChainAnchors)]
  return pems.flatMap((pem) => {
    try {
      return [parseCertificate(pem)]
    } catch {
      return []
    }
  })
}

/**
 * The certificates the trust lists named by `ids` (a presentation configuration's or a wallet
 * provider's) contribute at `now`, and the lists that contribute nothing because they are past
 * NextUpdate + grace or never fetched (fail closed).
 */
export function trustListCertificates(lists: TrustListRow[], ids: string[] | undefined, now: Date) {
  const certificates: string[] = []
  const unusable: string[] = []
  for (const id of ids ?? []) {
    const list = lists.find((row) => row.id === id)
    if (!list) continue
    const state = trustListState(list, now)
    if (state === 'current') certificates.push(...list.certificates)
    else unusable.push(`'${id}' (${unusableReason(state)})`)
  }
  return { certificates, unusable }
}

const unusableReason = (state: 'pending' | 'expired') =>
  state === 'expired' ? 'past NextUpdate + grace' : 'not fetched yet'

/** A configuration's trust list an `etsi_tl` Trusted Authorities Query can name (OpenID4VP 1.0 §6.1.1.2). */
export interface EtsiTrustedList {
  id: string
  url: string
  /** Its current certificates (PEM); empty when `unusable`. */
  certificates: string[]
  /** Why it contributes no certificates at `now` (fail closed). */
  unusable?: string
}

/**
 * The configuration's trust lists that `etsi_tl` names: those of source type `etsi-tl` or
 * `etsi-lotl` (ETSI TS 119 612 lists, what OpenID4VP 1.0 §6.1.1.2 means by a Trusted List; a list
 * of lists stands for the lists it points to), by their URL, as they stand at `now`. A LoTE (TS
 * 119 602) contributes its certificates as anchors but has no `etsi_tl` name.
 */
export function etsiTrustedLists(
  lists: TrustListRow[],
  ids: string[] | undefined,
  now: Date,
): EtsiTrustedList[] {
  return (ids ?? []).flatMap((id) => {
    const list = lists.find((row) => row.id === id)
    if (list?.source.type !== 'etsi-tl' && list?.source.type !== 'etsi-lotl') return []
    const state = trustListState(list, now)
    return [
      state === 'current'
        ? { id, url: list.source.url, certificates: list.certificates }
        : { id, url: list.source.url, certificates: [], unusable: `'${id}' ${unusableReason(state)}` },
    ]
  })
}

/**
 * The DCQL query a request carries: the configuration's, with `trustedAuthorities: from-anchors`
 * Trusted Authorities Queries added to every credential query that has none of its own, so
 * wallets offer only credentials from issuers this verifier trusts (OpenID4VP 1.0 §6.1.1): `aki`
 * (§6.1.1.1) naming the issuer trust anchors (its trust lists' current certificates, the tenant's
 * key chains) and `etsi_tl` (§6.1.1.2) naming the URLs of its current
 * ETSI TS 119 612 lists. The anchors still decide trust when the answer comes.
 */
export async function requestDcqlQuery(
  keyChains: KeyChainRow[],
  config: Pick<PresentationConfig, 'dcqlQuery' | 'trustListIds' | 'trustedAuthorities'>,
  trustLists: TrustListRow[],
  now: Date,
): Promise<DcqlQuery> {
  if (config.trustedAuthorities !== 'from-anchors') return config.dcqlQuery
  const listCertificates = trustListCertificates(trustLists, config.trustListIds, now).certificates
  const values = await anchorAuthorityKeyIds(issuerTrustAnchors(keyChains, listCertificates))
  const urls = [
    ...new Set(
      etsiTrustedLists(trustLists, config.trustListIds, now)
        .filter((list) => !list.unusable)
        .map((list) => list.url),
    ),
  ]
  // OpenID4VP 1.0 §6.1.1: the anchors of its openid-federation trust sources (SD-JWT VC and VC-JWT queries).
  const entities = [
    ...new Set(
      federationTrustSources(trustLists, config.trustListIds).map((source) => source.anchor.entityId),
    ),
  ]
  const authorities = (format: string) => [
    ...(values.length ? [{ type: 'aki' as const, values }] : []),
    ...(urls.length ? [{ type: 'etsi_tl' as const, values: urls }] : []),
    ...(entities.length && (FEDERATED_ISSUER_FORMATS as readonly string[]).includes(format)
      ? [{ type: 'openid_federation' as const, values: entities }]
      : []),
  ]
  return {
    ...config.dcqlQuery,
    credentials: config.dcqlQuery.credentials.map((credential) => {
      const named = authorities(credential.format)
      return credential.trusted_authorities || named.length === 0
        ? credential
        : { ...credential, trusted_authorities: named }
    }),
  }
}
