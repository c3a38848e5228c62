import type { CredentialFormat, DcqlQuery, PresentationConfig } from '@credential-service/core-domain'
import { inSpan } from '@credential-service/core-domain/tracing'
import {
  formatRuntime,
  type HolderBinding,
  PresentationRejected,
  selectClaims,
  type TrustedAuthoritiesQuery,
  type TrustedListAnchors,
} from '@credential-service/crypto'
import type { PresentationSessionRow, TrustListRow } from '@credential-service/db-schema'
import { federationKeyChainOf } from '../federation/entity-key'
import {
  FederatedTrustRefusal,
  federatedEntityKeys,
  federationTrustSources,
} from '../federation/federated-trust'
import {
  etsiTrustedLists,
  issuerTrustAnchors as trustAnchors,
  trustListCertificates,
} from '../issuer-anchors'
import type { PresentationDeps } from './deps'
import { presentationTrust } from './status-list'

/**
 * Which credential queries must be answered (OpenID4VP §6.4.2): every required credential set
 * needs one option fully present; without credential_sets, every credential query is required.
 */
export function checkCredentialSets(query: DcqlQuery, presented: Set<string>): void {
  const sets = query.credential_sets ?? [{ options: [query.credentials.map((c) => c.id)], required: true }]
  for (const set of sets) {
    if (set.required === false) continue
    if (!set.options.some((option) => option.every((id) => presented.has(id)))) {
      throw new PresentationRejected(
        `no option of a required credential set was presented (${set.options.map((o) => o.join('+')).join(' | ')})`,
      )
    }
  }
}

/** Requested claims present with allowed values, and one claim set satisfied (OpenID4VP §6.3, §6.4.1). */
export function checkClaims(
  credential: DcqlQuery['credentials'][number],
  claims: Record<string, unknown>,
): void {
  if (!credential.claims) return
  // A claim is there when its path selects something (§7.1); with `values`, one of the selected
  // values is one of them (§6.3).
  const satisfied = (claim: NonNullable<typeof credential.claims>[number]) => {
    const selected = selectClaims(claims, claim.path)
    if (selected === undefined) return false
    const { values } = claim
    return !values || selected.some((value) => values.some((allowed) => allowed === value))
  }
  if (!credential.claim_sets) {
    const missing = credential.claims.filter((claim) => !satisfied(claim))
    if (missing.length) {
      throw new PresentationRejected(
        `requested claims missing or not matching: ${missing.map((c) => JSON.stringify(c.path)).join(', ')}`,
      )
    }
    return
  }
  const byId = new Map(credential.claims.map((claim) => [claim.id, claim]))
  const ok = credential.claim_sets.some((set) =>
    set.every((id) => {
      const claim = byId.get(id)
      return claim !== undefined && satisfied(claim)
    }),
  )
  if (!ok) throw new PresentationRejected('no claim set of the query is satisfied')
}

/**
 * What a presentation must be bound to besides the session's nonce and transaction data: the
 * KB-JWT `aud` (SD-JWT VC) and the mdoc SessionTranscript of the channel.
 */
export type PresentationBinding = Pick<HolderBinding, 'audiences' | 'mdocTranscript'>

/** The configuration and the trust its presentations are checked against. */
export async function verification(deps: PresentationDeps, row: PresentationSessionRow, now: Date) {
  const config = await deps.tenants.presentationConfig(row.tenantId, row.presentationConfigId)
  if (!config) return undefined
  const rows = await deps.tenants.trustLists(row.tenantId)
  const lists = trustListCertificates(rows, config.trustListIds, now)
  // The federation entity key signs entity statements only, never a credential to trust.
  const entityKeyChain = await federationKeyChainOf(deps.tenants, row.tenantId)
  const ownChains = (await deps.keys.keyChains(row.tenantId)).filter((chain) => chain.id !== entityKeyChain)
  const trust = presentationTrust({
    anchors: trustAnchors(ownChains, lists.certificates),
    acceptAnyIssuer: config.acceptAnyIssuer,
    now,
    outbound: deps.outbound,
    statusLists: deps.statusLists,
  })
  const sources = federationTrustSources(rows, config.trustListIds)
  // OpenID Federation trust sources: an SD-JWT VC issuer without x5c, by its iss as entity id.
  const federatedIssuer = sources.length
    ? async (entityId: string, trustedAuthorities: TrustedAuthoritiesQuery[] | undefined) => {
        try {
          return await federatedEntityKeys({
            sources,
            entityId,
            entityType: 'openid_credential_issuer',
            now,
            outbound: deps.outbound,
            trustedAuthorities,
            what: 'the issuer',
          })
        } catch (error) {
          if (error instanceof FederatedTrustRefusal) throw new PresentationRejected(error.message)
          throw error
        }
      }
    : undefined
  return {
    config,
    trust: { ...trust, trustedLists: trustedListAnchors(rows, config, now), federatedIssuer },
    unusableTrustLists: lists.unusable,
  }
}
/**
 * The configuration's ETSI trusted lists by URL, for `etsi_tl` queries (OpenID4VP 1.0 §6.1.1.2):
 * each list's current certificates as the anchors a matching chain validates to, or why it has none.
 */
export function trustedListAnchors(
  rows: TrustListRow[],
  config: Pick<PresentationConfig, 'trustListIds'>,
  now: Date,
): Map<string, TrustedListAnchors> {
  const byUrl = new Map<string, TrustedListAnchors>()
  for (const list of etsiTrustedLists(rows, config.trustListIds, now)) {
    const anchors = trustAnchors([], list.certificates)
    const held = byUrl.get(list.url)
    // Two lists at one URL: the current one's certificates count.
    if (held && !held.unusable) held.anchors.push(...anchors)
    else byUrl.set(list.url, { anchors, unusable: list.unusable })
  }
  return byUrl
}

export type Verification = NonNullable<Awaited<ReturnType<typeof verification>>>

/**
 * Verifies every presentation of a `vp_token` (OpenID4VP §8.1: each a string, an SD-JWT or a
 * base64url DeviceResponse) against the query and the binding; the claims per credential query id.
 */
export async function verifyVpToken(
  checked: Verification,
  row: PresentationSessionRow,
  vpToken: Record<string, string[]>,
  binding: PresentationBinding,
): Promise<Record<string, Record<string, unknown>[]>> {
  try {
    return await verifyEach(checked, row, vpToken, binding)
  } catch (error) {
    // A refusal while a named trust list is failing closed says so: the likely cause is the list.
    if (!(error instanceof PresentationRejected) || !checked.unusableTrustLists.length) throw error
    throw new PresentationRejected(
      `${error.message}; trust list(s) ${checked.unusableTrustLists.join(', ')} contribute no certificates (fail closed)`,
      error.toWallet,
    )
  }
}

async function verifyEach(
  { config, trust }: Verification,
  row: PresentationSessionRow,
  vpToken: Record<string, string[]>,
  binding: PresentationBinding,
): Promise<Record<string, Record<string, unknown>[]>> {
  const result: Record<string, Record<string, unknown>[]> = {}
  for (const [id, presentations] of Object.entries(vpToken)) {
    const query = config.dcqlQuery.credentials.find((credential) => credential.id === id)
    if (!query) throw new PresentationRejected(`vp_token has '${id}', which the query did not ask for`)
    if (presentations.length > 1 && !query.multiple)
      throw new PresentationRejected(
        `vp_token.${id} has ${presentations.length} presentations; one was asked for`,
      )
    // Each presentation by its format's runtime (packages/crypto/src/formats).
    const runtime = formatRuntime(query.format)
    const claimsOf = (presentation: string) =>
      verifyStep(query.format, () =>
        runtime.verify({
          presentation,
          query,
          binding: { ...binding, nonce: row.nonce, transactionData: row.transactionData },
          trust,
        }),
      )
    result[id] = []
    for (const presentation of presentations) {
      const claims = await claimsOf(presentation)
      checkClaims(query, claims)
      result[id].push(claims)
    }
  }
  checkCredentialSets(config.dcqlQuery, new Set(Object.keys(result)))
  return result
}

/** One presentation's verification by its format module, as a span of the response step. */
export function verifyStep<T>(format: CredentialFormat, verify: () => Promise<T>): Promise<T> {
  return inSpan('verifier verify presentation', verify, {
    attributes: () => ({ 'credential.format': format }),
  })
}
