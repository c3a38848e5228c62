import {
  decodeEntityStatement,
  type FederationAnchor,
  type FederationRefusalKind,
  FederationTrustError,
  resolveTrustChain,
  type TrustChainResult,
  type TrustedAuthoritiesQuery,
  verifyTrustChain,
} from '@credential-service/crypto'
import type { TrustListRow } from '@credential-service/db-schema'
import type { JSONWebKeySet } from 'jose'
import type { OutboundPolicy } from '../outbound-fetch'
import { federationFetch } from './own-trust-chain'

/** A trust list of source type `openid-federation`: one trust anchor and the trust marks it requires. */
export interface FederationTrustSource {
  id: string
  anchor: FederationAnchor
  requiredTrustMarks: string[]
  /** The row as the tenant cache holds it (its tenant, and when it was last saved). */
  row: TrustListRow
}

/** The named lists (a presentation configuration's, a wallet provider's) of source type `openid-federation`. */
export function federationTrustSources(
  rows: TrustListRow[],
  ids: string[] | undefined,
): FederationTrustSource[] {
  return (ids ?? []).flatMap((id) => {
    const row = rows.find((candidate) => candidate.id === id)
    if (row?.source.type !== 'openid-federation') return []
    const { trustAnchor, jwks, requiredTrustMarkTypes } = row.source
    return [
      {
        id,
        anchor: { entityId: trustAnchor, jwks: jwks as JSONWebKeySet },
        requiredTrustMarks: requiredTrustMarkTypes ?? [],
        row,
      },
    ]
  })
}

const REFUSAL_NAMES: Record<FederationRefusalKind, string> = {
  'broken-chain': 'broken chain',
  'expired-statement': 'expired statement',
  'policy-violation': 'policy violation',
  'missing-trust-mark': 'missing trust mark',
}

/** An entity no trust source vouches for; the message names each source's reason. */
export class FederatedTrustRefusal extends Error {
  override name = 'FederatedTrustRefusal'
}

// Chains resolved per trust list and entity, kept until the earliest exp of the chain. Bounded:
// entity ids come from presented credentials, so a flood of names must not grow the heap.
const MAX_CHAINS_PER_SOURCE = 256
const MAX_SOURCES = 1000
/**
 * By tenant and list id: the list as it was saved (its `updatedAt` and source) and its chains. The
 * tenant cache re-reads rows every few seconds, so a row object is no key; a list saved again (the
 * tenant change announcement brings it to every process) has another version, and its chains go.
 */
const resolved = new Map<string, { version: string; chains: Map<string, Promise<TrustChainResult>> }>()

function chainsOf(row: TrustListRow): Map<string, Promise<TrustChainResult>> {
  const key = `${row.tenantId}\u0000${row.id}`
  const version = `${row.updatedAt.getTime()}:${JSON.stringify(row.source)}`
  const held = resolved.get(key)
  if (held?.version === version) return held.chains
  resolved.delete(key)
  if (resolved.size >= MAX_SOURCES) resolved.delete(resolved.keys().next().value as string)
  const chains = new Map<string, Promise<TrustChainResult>>()
  resolved.set(key, { version, chains })
  return chains
}

/** What resolving an entity through a trust source needs. */
export interface FederatedEntityOptions {
  sources: FederationTrustSource[]
  entityId: string
  /** The metadata the entity must keep after the policies (§6.1), whose `jwks` is answered. */
  entityType: 'openid_credential_issuer' | 'wallet_provider'
  now: Date
  outbound: OutboundPolicy
  /** A `trust_chain` the entity sent (§4.3): verified instead of resolved, never cached. */
  trustChain?: string[] | undefined
  /** OpenID4VP 1.0 §6.1.1: with any, the chain must pass through an entity an `openid_federation` one names. */
  trustedAuthorities?: TrustedAuthoritiesQuery[] | undefined
  /** Who is asking, for the refusal: "the issuer", "the wallet provider". */
  what: string
}

function chainOf(source: FederationTrustSource, options: FederatedEntityOptions): Promise<TrustChainResult> {
  const verifyOptions = {
    anchors: [source.anchor],
    now: options.now,
    requiredTrustMarks: source.requiredTrustMarks,
  }
  if (options.trustChain)
    return verifyTrustChain(options.trustChain, verifyOptions).then((chain) => {
      // §4.3: the chain sent with a JWT is the chain of that JWT's issuer, not of anyone else.
      if (chain.subject !== options.entityId)
        throw new FederationTrustError(`the trust_chain is about ${chain.subject}, not ${options.entityId}`)
      return chain
    })
  const chains = chainsOf(source.row)
  const held = chains.get(options.entityId)
  if (held) return held
  // Map order is insertion order: the oldest entry leaves first.
  if (chains.size >= MAX_CHAINS_PER_SOURCE) chains.delete(chains.keys().next().value as string)
  const pending = resolveTrustChain(options.entityId, {
    ...verifyOptions,
    fetch: federationFetch(options.outbound),
  })
  chains.set(options.entityId, pending)
  // Failures are not kept: the next presentation tries again (fail closed each time).
  pending.catch(() => chains.delete(options.entityId))
  return pending
}

/** The chain, if still valid at `now`; a cached chain past its earliest exp is resolved again. */
async function currentChain(source: FederationTrustSource, options: FederatedEntityOptions) {
  const chain = await chainOf(source, options)
  if (chain.expiresAt.getTime() > options.now.getTime()) return chain
  chainsOf(source.row).delete(options.entityId)
  return chainOf(source, options)
}

/** The entity ids a chain names (subject, intermediates, anchor). */
const chainEntities = (chain: TrustChainResult) =>
  new Set(chain.statements.flatMap((jwt) => [decodeEntityStatement(jwt).iss, decodeEntityStatement(jwt).sub]))

function authoritiesRefusal(chain: TrustChainResult, queries: TrustedAuthoritiesQuery[] | undefined) {
  if (!queries?.length) return undefined
  const named = queries.filter((query) => query.type === 'openid_federation').flatMap((query) => query.values)
  const entities = chainEntities(chain)
  if (named.some((entityId) => entities.has(entityId))) return undefined
  return `its trust chain passes through none of the entities the query's trusted_authorities name (OpenID4VP 1.0 §6.1.1${named.length ? `: openid_federation ${named.join(', ')}` : ''})`
}

/**
 * The keys of `entityId` for `entityType`, through the first trust source whose anchor its trust
 * chain reaches (OpenID Federation 1.0 §10: chain, constraints, policies, required trust marks):
 * the `jwks` of its `entityType` metadata after the policies. Throws FederatedTrustRefusal naming
 * each source's reason (broken chain, expired statement, policy violation, missing trust mark).
 */
export async function federatedEntityKeys(options: FederatedEntityOptions): Promise<JSONWebKeySet> {
  const refusals: string[] = []
  for (const source of options.sources) {
    try {
      const chain = await currentChain(source, options)
      const metadata = chain.metadata[options.entityType]
      if (!metadata)
        throw new FederationTrustError(
          `no ${options.entityType} metadata survives the federation's policies and constraints`,
          'policy-violation',
        )
      const jwks = metadata.jwks as JSONWebKeySet | undefined
      if (!jwks || !Array.isArray(jwks.keys))
        throw new FederationTrustError(`its ${options.entityType} metadata has no jwks`, 'policy-violation')
      const authorities = authoritiesRefusal(chain, options.trustedAuthorities)
      if (authorities) {
        refusals.push(`trust source '${source.id}': ${authorities}`)
        continue
      }
      return jwks
    } catch (error) {
      if (!(error instanceof FederationTrustError)) throw error
      refusals.push(`trust source '${source.id}' (${REFUSAL_NAMES[error.kind]}): ${error.message}`)
    }
  }
  throw new FederatedTrustRefusal(
    `${options.what} ${options.entityId} is not trusted through OpenID Federation: ${refusals.join('; ') || 'no trust source of type openid-federation'}`,
  )
}
