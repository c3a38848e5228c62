import {
  type FederationMembership,
  type FederationMembershipInput,
  NotFoundError,
  type Principal,
  RuleViolationError,
  zFederationMembershipInput,
} from '@credential-service/core-domain'
import {
  createFederationRepository,
  createKeyChainRepository,
  createTenantRepository,
  type Database,
  type Executor,
  type FederationMembershipRow,
  type FederationMembershipValues,
  recordAudit,
} from '@credential-service/db-schema'
import { decodeJwt, decodeProtectedHeader } from 'jose'

/** A membership as parsed (defaults filled). */
export type FederationMembershipData = ReturnType<typeof zFederationMembershipInput.parse>

export interface FederationServiceDeps {
  db: Database
  publicUrl: string
}

/** The tenant's two federation entities: its credential issuer and its verifier (docs/federation.md). */
export function federationEntityIds(publicUrl: string, tenantId: string) {
  return { issuer: `${publicUrl}/issuers/${tenantId}`, verifier: `${publicUrl}/verifiers/${tenantId}` }
}

function toMembership(row: FederationMembershipRow, publicUrl: string): FederationMembership {
  return {
    keyChainId: row.keyChainId,
    authorityHints: row.authorityHints,
    trustAnchors: row.trustAnchors,
    trustMarks: row.trustMarks,
    subordinateStatements: row.subordinateStatements,
    lifetimeSeconds: row.lifetimeSeconds,
    organizationName: row.organizationName,
    entityIds: federationEntityIds(publicUrl, row.tenantId),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

const claimsOf = (jwt: string) => {
  try {
    return { header: decodeProtectedHeader(jwt), claims: decodeJwt(jwt) }
  } catch {
    return undefined
  }
}

/**
 * What the statements and marks given must say to belong to this tenant: a trust mark names its
 * type and one of the tenant's entities (OpenID Federation 1.0 §7.1), a subordinate statement is
 * issued by one of the authority hints about one of them (§3.2). Their signatures are checked by
 * whoever resolves the chain.
 */
export function membershipIssues(
  input: FederationMembershipData,
  /** The tenant's entity identifiers; without them (a folder read before PUBLIC_URL is known) `sub` is not checked. */
  entities: string[] | undefined,
  prefix = 'body',
) {
  const issues: { path: string; message: string }[] = []
  input.trustMarks.forEach((mark, index) => {
    const read = claimsOf(mark.trustMark)
    const path = `${prefix}.trustMarks.${index}.trustMark`
    if (read?.header.typ !== 'trust-mark+jwt')
      issues.push({ path, message: 'not a trust mark JWT (typ trust-mark+jwt)' })
    else if (read.claims.trust_mark_type !== mark.trustMarkType)
      issues.push({ path, message: 'its trust_mark_type is not trustMarkType' })
    else if (entities && !entities.includes(String(read.claims.sub)))
      issues.push({
        path,
        message: `its sub is not one of the tenant’s entity identifiers (${entities.join(', ')})`,
      })
  })
  input.subordinateStatements.forEach((jwt, index) => {
    const read = claimsOf(jwt)
    const path = `${prefix}.subordinateStatements.${index}`
    if (read?.header.typ !== 'entity-statement+jwt')
      issues.push({ path, message: 'not an entity statement (typ entity-statement+jwt)' })
    else if (entities && !entities.includes(String(read.claims.sub)))
      issues.push({
        path,
        message: `its sub is not one of the tenant’s entity identifiers (${entities.join(', ')})`,
      })
    else if (!input.authorityHints.includes(String(read.claims.iss)))
      issues.push({ path, message: 'its iss is not one of authorityHints' })
  })
  return issues
}

/**
 * Every rule of a membership, for the API and the import: the statements and marks given belong
 * to the tenant's entities, and the key chain exists and signs no configuration.
 */
export async function storedMembershipIssues(
  deps: FederationServiceDeps,
  tenantId: string,
  input: FederationMembershipData,
  options: { prefix?: string; tx?: Executor } = {},
) {
  const prefix = options.prefix ?? 'body'
  const tx = options.tx ?? deps.db
  const entities = Object.values(federationEntityIds(deps.publicUrl, tenantId))
  const issues = membershipIssues(input, entities, prefix)
  const path = `${prefix}.keyChainId`
  if (!(await createKeyChainRepository(deps.db, tenantId).get(input.keyChainId, tx)))
    issues.push({ path, message: `no key chain '${input.keyChainId}'` })
  else {
    // The federation entity key is kept apart from the keys that sign credentials and requests.
    const users = await createFederationRepository(deps.db, tenantId).configsSigningWith(input.keyChainId, tx)
    if (users.length)
      issues.push({
        path,
        message: `the key chain signs configurations (${users.join(', ')}); use a key chain of its own`,
      })
  }
  return issues
}

export function membershipColumns(input: FederationMembershipData): FederationMembershipValues {
  return {
    keyChainId: input.keyChainId,
    authorityHints: input.authorityHints,
    trustAnchors: input.trustAnchors,
    trustMarks: input.trustMarks,
    subordinateStatements: input.subordinateStatements,
    lifetimeSeconds: input.lifetimeSeconds,
    organizationName: input.organizationName ?? null,
  }
}

/** The tenant's OpenID Federation membership: superiors, anchors, statements and marks given. */
export function createFederationService(deps: FederationServiceDeps, tenantId: string, actor: Principal) {
  const repo = createFederationRepository(deps.db, tenantId)
  const requireTenant = async () => {
    if (!(await createTenantRepository(deps.db).get(tenantId))) throw new NotFoundError('tenant', tenantId)
  }
  return {
    async get(): Promise<FederationMembership> {
      await requireTenant()
      const row = await repo.get()
      if (!row) throw new NotFoundError('federation membership')
      return toMembership(row, deps.publicUrl)
    },

    async put(body: FederationMembershipInput): Promise<FederationMembership> {
      await requireTenant()
      const input = zFederationMembershipInput.parse(body)
      const issues = await storedMembershipIssues(deps, tenantId, input)
      if (issues.length)
        throw new RuleViolationError('the federation membership is not valid; see errors', issues)
      return deps.db.transaction(async (tx) => {
        const existing = await repo.get(tx)
        const saved = await repo.put(membershipColumns(input), tx)
        await recordAudit(tx, {
          tenantId,
          actorClientId: actor.clientId,
          action: existing ? 'update' : 'create',
          resourceType: 'federation-membership',
          resourceId: tenantId,
          detail: { fields: Object.keys(body) },
        })
        return toMembership(saved, deps.publicUrl)
      })
    },

    async delete(): Promise<void> {
      await requireTenant()
      await deps.db.transaction(async (tx) => {
        if (!(await repo.delete(tx))) throw new NotFoundError('federation membership')
        await recordAudit(tx, {
          tenantId,
          actorClientId: actor.clientId,
          action: 'delete',
          resourceType: 'federation-membership',
          resourceId: tenantId,
        })
      })
    },
  }
}
