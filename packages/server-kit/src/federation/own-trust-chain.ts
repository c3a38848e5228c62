import { RuleViolationError } from '@credential-service/core-domain'
import {
  entityConfigurationUrl,
  FederationTrustError,
  resolveTrustChain,
  type TrustChainResult,
} from '@credential-service/crypto'
import type { FederationMembershipRow } from '@credential-service/db-schema'
import type { KeyRuntime } from '../key-runtime'
import { type OutboundPolicy, outboundFetch } from '../outbound-fetch'
import type { TenantCache } from '../tenant-cache'
import { signEntityConfiguration } from './entity-configuration'
import { verifierEntityMetadata } from './verifier-metadata'

export interface OwnTrustChainDeps {
  keys: KeyRuntime
  tenants: TenantCache
  publicUrl: string
  now: () => Date
  outbound: OutboundPolicy
}

// Federation answers are small signed JWTs; a superior that cannot answer in time fails the chain.
const FETCH_TIMEOUT_MS = 5000
const MAX_STATEMENT_BYTES = 256 * 1024

/**
 * Resolved chains by tenant and entity, with the version they were resolved for: the membership's
 * content, the tenant's published keys (our own configuration in the chain carries the request
 * keys) and the caller's own part (the issuer's metadata). Not by row object: the tenant cache
 * reads rows again every few seconds, which would resolve the chain again each time instead of
 * keeping it until its `exp`.
 */
const resolved = new Map<string, { version: string; chain: Promise<TrustChainResult> }>()

async function versionOf(
  deps: OwnTrustChainDeps,
  tenantId: string,
  membership: FederationMembershipRow,
  own: string,
) {
  const { keys } = await deps.keys.jwks(tenantId)
  return `${JSON.stringify(membership)}|${keys.map((key) => key.kid).join(',')}|${own}`
}
/** Fetches a federation JWT under the outbound policy (SSRF rules, size and time bounds). */
export function federationFetch(outbound: OutboundPolicy) {
  return async (url: string): Promise<string> => {
    const answer = await outboundFetch(
      url,
      {
        name: 'the federation endpoint',
        purpose: 'federation',
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: MAX_STATEMENT_BYTES,
      },
      outbound,
    )
    if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`)
    return answer.body.toString('utf8').trim()
  }
}

/** One of the tenant's own federation entities: its identifier and the metadata it publishes. */
export interface OwnEntity {
  entityId: string
  metadata: () => Promise<Record<string, Record<string, unknown>>>
  /** What else the chain depends on beyond membership and keys (e.g. the metadata's digest). */
  version?: string
}

/**
 * The trust chain (OpenID Federation 1.0 §4) of one of the tenant's entities to one of the
 * membership's trust anchors, for `trust_chain` JOSE headers (§4.3): its entity configuration
 * signed here, the subordinate statements given at save (when not expired) or fetched from the
 * superiors, and the anchor's configuration. Resolved once per process and version, and kept until
 * the earliest `exp` of the chain. A chain that does not resolve is a configuration fault (422),
 * never a JWT without its chain.
 */
export async function ownTrustChain(
  deps: OwnTrustChainDeps,
  tenantId: string,
  entity: OwnEntity,
): Promise<TrustChainResult> {
  const membership = await deps.tenants.federation(tenantId)
  if (!membership)
    throw new RuleViolationError(
      'the tenant is no federation member: PUT /api/federation before using openid_federation',
    )
  const now = deps.now()
  const { entityId } = entity
  const version = await versionOf(deps, tenantId, membership, entity.version ?? '')
  const key = `${tenantId} ${entityId}`
  const cached = resolved.get(key)
  if (cached?.version === version) {
    const chain = await cached.chain.catch(() => undefined)
    if (chain && chain.expiresAt.getTime() - 30_000 > now.getTime()) return chain
  }
  const fetchRemote = federationFetch(deps.outbound)
  const pending = resolveTrustChain(entityId, {
    anchors: membership.trustAnchors,
    now,
    knownStatements: membership.subordinateStatements,
    fetch: async (url) => {
      // Our own configuration is signed here, not fetched over the network from ourselves.
      if (url === entityConfigurationUrl(entityId))
        return signEntityConfiguration(deps, tenantId, entityId, await entity.metadata())
      return fetchRemote(url)
    },
  })
  resolved.set(key, { version, chain: pending })
  try {
    return await pending
  } catch (error) {
    if (resolved.get(key)?.chain === pending) resolved.delete(key)
    if (error instanceof FederationTrustError)
      throw new RuleViolationError(`the trust chain of ${entityId} does not resolve: ${error.message}`)
    throw error
  }
}

/**
 * The verifier's own trust chain, for the `trust_chain` header of `openid_federation` request
 * objects (OpenID4VP 1.0 §5.9.3).
 */
export async function verifierTrustChain(deps: OwnTrustChainDeps, tenantId: string): Promise<string[]> {
  const chain = await ownTrustChain(deps, tenantId, {
    entityId: `${deps.publicUrl}/verifiers/${tenantId}`,
    metadata: () => verifierEntityMetadata(deps, tenantId),
  })
  return chain.statements
}
