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
 * Resolved chains by tenant, with the version they were resolved for: the membership's content and
 * the tenant's published keys (our own configuration in the chain carries the request keys). Not
 * by row object: the tenant cache reads rows again every few seconds, which would resolve the chain
 * again each time instead of keeping it until its `exp`.
 */
const resolved = new Map<string, { version: string; chain: Promise<TrustChainResult> }>()

async function versionOf(deps: OwnTrustChainDeps, tenantId: string, membership: FederationMembershipRow) {
  const { keys } = await deps.keys.jwks(tenantId)
  return `${JSON.stringify(membership)}|${keys.map((key) => key.kid).join(',')}`
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

/**
 * The verifier's own trust chain (OpenID Federation 1.0 §4) to one of the membership's trust
 * anchors, for the `trust_chain` header of `openid_federation` request objects (OpenID4VP 1.0
 * §5.9.3): its entity configuration signed here, the subordinate statements given at save (when
 * not expired) or fetched from the superiors, and the anchor's configuration. Resolved once per
 * process and kept until the earliest `exp` of the chain. A chain that does not resolve is a
 * configuration fault (422), never a request object without its chain.
 */
export async function verifierTrustChain(deps: OwnTrustChainDeps, tenantId: string): Promise<string[]> {
  const membership = await deps.tenants.federation(tenantId)
  if (!membership)
    throw new RuleViolationError(
      'the tenant is no federation member: PUT /api/federation before using openid_federation',
    )
  const now = deps.now()
  const version = await versionOf(deps, tenantId, membership)
  const cached = resolved.get(tenantId)
  if (cached?.version === version) {
    const chain = await cached.chain.catch(() => undefined)
    if (chain && chain.expiresAt.getTime() - 30_000 > now.getTime()) return chain.statements
  }
  const entityId = `${deps.publicUrl}/verifiers/${tenantId}`
  const fetchRemote = federationFetch(deps.outbound)
  const pending = resolveTrustChain(entityId, {
    anchors: membership.trustAnchors,
    now,
    knownStatements: membership.subordinateStatements,
    fetch: async (url) => {
      // Our own configuration is signed here, not fetched over the network from ourselves.
      if (url === entityConfigurationUrl(entityId))
        return signEntityConfiguration(deps, tenantId, entityId, await verifierEntityMetadata(deps, tenantId))
      return fetchRemote(url)
    },
  })
  resolved.set(tenantId, { version, chain: pending })
  try {
    return (await pending).statements
  } catch (error) {
    if (resolved.get(tenantId)?.chain === pending) resolved.delete(tenantId)
    if (error instanceof FederationTrustError)
      throw new RuleViolationError(`the verifier's trust chain does not resolve: ${error.message}`)
    throw error
  }
}
