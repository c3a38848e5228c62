import type { JSONWebKeySet } from 'jose'
import {
  decodeEntityStatement,
  type EntityStatement,
  FederationTrustError,
  verifyFederationJwt,
} from './entity-statement'
import {
  applyMetadataPolicy,
  type EntityMetadata,
  MetadataPolicyError,
  resolveMetadataPolicy,
} from './metadata-policy'
import { checkRequiredTrustMarks, type FederationAnchor, type TrustMarkIssuerKeys } from './trust-marks'

export interface VerifyTrustChainOptions {
  anchors: FederationAnchor[]
  now: Date
  /** Trust mark types the subject must hold (§7.3), checked against the anchor's trust_mark_issuers. */
  requiredTrustMarks?: string[] | undefined
  issuerKeys?: TrustMarkIssuerKeys | undefined
  /** The anchor's entity configuration when the chain leaves it out (§4: it may be omitted). */
  anchorConfiguration?: EntityStatement | undefined
}

export interface TrustChainResult {
  /** The chain subject's entity identifier. */
  subject: string
  /** The trust anchor the chain ends at. */
  anchor: string
  /** The subject's metadata after the superior's metadata, the entity type constraints and the policies. */
  metadata: EntityMetadata
  /** The subject's federation keys, from its entity configuration. */
  jwks: JSONWebKeySet
  /** The earliest `exp` of the chain: until then the result may be cached (§10.4). */
  expiresAt: Date
  /** The chain as verified, subject first. */
  statements: string[]
}

const isConfiguration = (statement: EntityStatement) => statement.iss === statement.sub

function hostOf(entityId: string): string {
  try {
    return new URL(entityId).hostname
  } catch {
    throw new FederationTrustError(`${entityId} is not an entity identifier`)
  }
}

// §6.2.2: a name starting with a period is a domain (its subdomains), otherwise one host.
const matchesName = (host: string, name: string) =>
  name.startsWith('.') ? host.endsWith(name) : host === name

/** §6.2: the constraints of the subordinate statement at `index`, over the entities below its issuer. */
function checkConstraints(statements: EntityStatement[], index: number): string[] | undefined {
  const constraints = (statements[index] as EntityStatement).constraints
  if (!constraints) return undefined
  const max = constraints.max_path_length
  // ES[index] is issued by the entity index+1; between it and the subject stand index-1 intermediates.
  if (typeof max === 'number' && index - 1 > max)
    throw new FederationTrustError(
      `the chain has ${index - 1} intermediates below ${(statements[index] as EntityStatement).iss}, whose max_path_length is ${max}`,
    )
  const naming = constraints.naming_constraints
  if (naming) {
    for (const statement of statements.slice(0, index + 1)) {
      const host = hostOf(statement.sub)
      if (naming.excluded?.some((name) => matchesName(host, name)))
        throw new FederationTrustError(`${statement.sub} is excluded by the naming constraints`)
      if (naming.permitted && !naming.permitted.some((name) => matchesName(host, name)))
        throw new FederationTrustError(`${statement.sub} is outside the permitted naming constraints`)
    }
  }
  return constraints.allowed_entity_types
}

/** The subject's metadata (§6.1.4.2): superior's metadata, §6.2.3 entity types, then the policies. */
function resolvedMetadata(statements: EntityStatement[], lastSubordinate: number): EntityMetadata {
  const metadata: EntityMetadata = structuredClone((statements[0] as EntityStatement).metadata ?? {})
  if (lastSubordinate >= 1) {
    for (const [entityType, values] of Object.entries((statements[1] as EntityStatement).metadata ?? {}))
      metadata[entityType] = { ...(metadata[entityType] ?? {}), ...values }
  }
  for (let index = 1; index <= lastSubordinate; index++) {
    const allowed = checkConstraints(statements, index)
    if (!allowed) continue
    for (const entityType of Object.keys(metadata))
      if (entityType !== 'federation_entity' && !allowed.includes(entityType)) delete metadata[entityType]
  }
  const policies: unknown[] = []
  const critical: string[] = []
  for (let index = lastSubordinate; index >= 1; index--) {
    const statement = statements[index] as EntityStatement
    if (statement.metadata_policy !== undefined) policies.push(statement.metadata_policy)
    critical.push(...(statement.metadata_policy_crit ?? []))
  }
  try {
    return applyMetadataPolicy(metadata, resolveMetadataPolicy(policies, critical))
  } catch (error) {
    if (error instanceof MetadataPolicyError)
      throw new FederationTrustError(error.message, 'policy-violation')
    throw error
  }
}

/**
 * Verifies a trust chain (OpenID Federation 1.0 §4, §10.2): the subject's entity configuration,
 * the subordinate statements up to one issued by a configured trust anchor, and optionally the
 * anchor's own configuration. Each statement is checked (§3.2) with the keys of the next, the
 * anchor's with the configured keys; the links (`iss` of one is the `sub` of the next), the
 * constraints (§6.2), the metadata policies (§6.1) and the required trust marks (§7.3).
 * Anything wrong throws FederationTrustError (fail closed).
 */
export async function verifyTrustChain(
  chain: string[],
  options: VerifyTrustChainOptions,
): Promise<TrustChainResult> {
  if (chain.length === 0) throw new FederationTrustError('the trust chain is empty')
  const decoded = chain.map((jwt) => decodeEntityStatement(jwt))
  const top = decoded[decoded.length - 1] as EntityStatement
  const anchor = options.anchors.find((candidate) => candidate.entityId === top.iss)
  if (!anchor)
    throw new FederationTrustError(`the trust chain does not end at a configured trust anchor (${top.iss})`)
  const endsWithAnchorConfiguration = isConfiguration(top)
  if (endsWithAnchorConfiguration && chain.length > 1 && decoded[chain.length - 2]?.iss !== top.sub)
    throw new FederationTrustError('the trust anchor configuration does not follow its subordinate statement')
  const lastSubordinate = endsWithAnchorConfiguration ? chain.length - 2 : chain.length - 1

  // From the anchor down: §4, the anchor's configured keys verify its configuration and the
  // statement it issued; every other statement is verified with the jwks of the one above it.
  const verified: EntityStatement[] = new Array(chain.length)
  for (let index = chain.length - 1; index >= 0; index--) {
    const claims = decoded[index] as EntityStatement
    const above = verified[index + 1]
    const keys = above && !isConfiguration(above) ? above.jwks : anchor.jwks
    const what =
      index === 0
        ? `entity configuration of ${claims.sub}`
        : isConfiguration(claims)
          ? `trust anchor configuration`
          : `statement of ${claims.iss} about ${claims.sub}`
    const statement = await verifyFederationJwt(chain[index] as string, {
      keys,
      now: options.now,
      typ: 'entity-statement+jwt',
      what,
    })
    if (above && statement.iss !== above.sub)
      throw new FederationTrustError(`the ${what} is not issued by ${above.sub}`)
    const subordinate = !isConfiguration(statement)
    if (subordinate && (statement.authority_hints || statement.trust_marks))
      throw new FederationTrustError(`the ${what} carries entity configuration claims`)
    if (!subordinate && (statement.metadata_policy || statement.constraints))
      throw new FederationTrustError(`the ${what} carries subordinate statement claims`)
    verified[index] = statement
  }
  const subject = verified[0] as EntityStatement
  if (!isConfiguration(subject))
    throw new FederationTrustError('the trust chain does not start with an entity configuration')
  if (chain.length > 1 && lastSubordinate >= 1) {
    // §3.2: a subordinate statement's issuer is one of its subject's authority_hints.
    const issuer = (verified[1] as EntityStatement).iss
    if (!subject.authority_hints?.includes(issuer))
      throw new FederationTrustError(`${issuer} is not among the authority_hints of ${subject.sub}`)
    // §4: the subject's own configuration is signed with a key of the jwks its superior gives.
    if ((verified[1] as EntityStatement).sub !== subject.sub)
      throw new FederationTrustError('the first subordinate statement is about another entity')
  }
  const metadata = resolvedMetadata(verified, lastSubordinate)
  const marksExpire = options.requiredTrustMarks?.length
    ? await checkRequiredTrustMarks({
        subject,
        anchor,
        anchorConfiguration: endsWithAnchorConfiguration ? top : options.anchorConfiguration,
        required: options.requiredTrustMarks,
        now: options.now,
        issuerKeys: options.issuerKeys,
      })
    : undefined
  // Kept until the earliest exp of the statements and of the trust marks the chain relied on.
  const expiresAt = new Date(
    Math.min(...verified.map((statement) => statement.exp), marksExpire ?? Number.POSITIVE_INFINITY) * 1000,
  )
  return {
    subject: subject.sub,
    anchor: anchor.entityId,
    metadata,
    jwks: subject.jwks,
    expiresAt,
    statements: chain,
  }
}
