import {
  decodeEntityStatement,
  type EntityStatement,
  type FederationRefusalKind,
  FederationTrustError,
  verifyFederationJwt,
} from './entity-statement'
import { type TrustChainResult, type VerifyTrustChainOptions, verifyTrustChain } from './trust-chain'

/** Fetches a federation endpoint's answer (the caller applies the outbound policy and bounds). */
export type FetchFederationJwt = (url: string) => Promise<string>

export interface ResolveTrustChainOptions
  extends Omit<VerifyTrustChainOptions, 'issuerKeys' | 'anchorConfiguration'> {
  fetch: FetchFederationJwt
  /** Most intermediates followed between the subject and an anchor; default 4. */
  maxIntermediates?: number
  /** Most authority_hints followed per entity; default 4. */
  maxHints?: number
  /** Subordinate statements already held (e.g. given by the superior): used instead of fetching while unexpired. */
  knownStatements?: string[]
}

/** §9: the entity configuration is at the well-known path appended to the entity identifier. */
export function entityConfigurationUrl(entityId: string): string {
  return `${entityId.replace(/\/$/, '')}/.well-known/openid-federation`
}

/**
 * Resolves the trust chain of `entityId` to one of the configured anchors (OpenID Federation 1.0
 * §10): its entity configuration, then up its `authority_hints`, each superior's configuration
 * (self-signed, for its `federation_fetch_endpoint`) and its subordinate statement about the
 * entity below (§8.1), until a configured anchor. A loop, a path longer than `maxIntermediates`
 * or no valid chain throws FederationTrustError with every reason met.
 */
export async function resolveTrustChain(
  entityId: string,
  options: ResolveTrustChainOptions,
): Promise<TrustChainResult> {
  const maxIntermediates = options.maxIntermediates ?? 4
  const maxHints = options.maxHints ?? 4
  const reasons: string[] = []
  const kinds = new Set<FederationRefusalKind>()
  // A fetch that fails is one reason among others: another authority hint may still lead to an anchor.
  const fetchJwt = async (url: string) => {
    try {
      return await options.fetch(url)
    } catch (error) {
      if (error instanceof FederationTrustError) throw error
      throw new FederationTrustError(`${url} could not be fetched (${(error as Error).message})`)
    }
  }
  const configurations = new Map<string, Promise<{ jwt: string; claims: EntityStatement }>>()

  const configuration = (id: string) => {
    let pending = configurations.get(id)
    if (!pending) {
      pending = (async () => {
        const jwt = await fetchJwt(entityConfigurationUrl(id))
        const claims = decodeEntityStatement(jwt, `entity configuration of ${id}`)
        if (claims.iss !== id || claims.sub !== id)
          throw new FederationTrustError(
            `the entity configuration at ${entityConfigurationUrl(id)} is not about ${id}`,
          )
        const anchor = options.anchors.find((candidate) => candidate.entityId === id)
        // Self-signed (§3.2) before its fetch endpoint is used; an anchor's with its configured keys.
        await verifyFederationJwt(jwt, {
          keys: anchor ? anchor.jwks : claims.jwks,
          now: options.now,
          typ: 'entity-statement+jwt',
          what: `entity configuration of ${id}`,
        })
        return { jwt, claims }
      })()
      configurations.set(id, pending)
    }
    return pending
  }

  const heldStatement = (issuer: string, subject: string) =>
    options.knownStatements?.find((jwt) => {
      const claims = decodeEntityStatement(jwt)
      return claims.iss === issuer && claims.sub === subject && claims.exp * 1000 > options.now.getTime()
    })

  // Trust marks issued by others than the anchor: the issuer's keys through its own chain.
  const issuerKeys = async (issuer: string) => {
    const chain = await resolveTrustChain(issuer, { ...options, requiredTrustMarks: [] })
    return chain.jwks
  }

  const climb = async (
    path: string[],
    current: EntityStatement,
    visited: string[],
  ): Promise<TrustChainResult | undefined> => {
    for (const hint of (current.authority_hints ?? []).slice(0, maxHints)) {
      if (visited.includes(hint)) {
        reasons.push(`a loop through ${hint}`)
        kinds.add('broken-chain')
        continue
      }
      try {
        const superior = await configuration(hint)
        const endpoint = (superior.claims.metadata?.federation_entity as Record<string, unknown> | undefined)
          ?.federation_fetch_endpoint
        if (typeof endpoint !== 'string')
          throw new FederationTrustError(`${hint} has no federation_fetch_endpoint`)
        const url = new URL(endpoint)
        url.searchParams.set('sub', current.sub)
        const statement = heldStatement(hint, current.sub) ?? (await fetchJwt(url.toString()))
        const anchor = options.anchors.find((candidate) => candidate.entityId === hint)
        if (anchor)
          return await verifyTrustChain([...path, statement, superior.jwt], {
            ...options,
            issuerKeys,
          })
        if (path.length > maxIntermediates) {
          reasons.push(`the path through ${hint} is longer than ${maxIntermediates} intermediates`)
          kinds.add('broken-chain')
          continue
        }
        const found = await climb([...path, statement], superior.claims, [...visited, hint])
        if (found) return found
      } catch (error) {
        if (!(error instanceof FederationTrustError)) throw error
        reasons.push(error.message)
        kinds.add(error.kind)
      }
    }
    return undefined
  }

  const subject = await configuration(entityId)
  if (options.anchors.some((anchor) => anchor.entityId === entityId))
    return verifyTrustChain([subject.jwt], { ...options, issuerKeys })
  const found = await climb([subject.jwt], subject.claims, [entityId])
  if (found) return found
  // One kind of reason over every path is that reason; mixed ones (or none) are a broken chain.
  throw new FederationTrustError(
    `no valid trust chain from ${entityId} to a configured trust anchor${reasons.length ? `: ${[...new Set(reasons)].join('; ')}` : ''}`,
    kinds.size === 1 ? [...kinds][0] : 'broken-chain',
  )
}
