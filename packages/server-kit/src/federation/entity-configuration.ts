import { NotFoundError } from '@credential-service/core-domain'
import { signJws } from '@credential-service/crypto'
import { decodeJwt } from 'jose'
import type { KeyRuntime } from '../key-runtime'
import type { TenantCache } from '../tenant-cache'

export interface EntityConfigurationDeps {
  keys: KeyRuntime
  tenants: TenantCache
  now: () => Date
}

/** §9.2: the media type of an entity configuration. */
export const ENTITY_STATEMENT_TYPE = 'application/entity-statement+jwt'

/**
 * The entity configuration of one of a tenant's federation entities (OpenID Federation 1.0 §9),
 * signed with the membership's key chain: its published keys (the rotated-out one too, during
 * its grace, §11.1) as `jwks`, the `authority_hints`, the metadata the entity publishes anyway
 * with a `federation_entity` entry, and the trust marks given about this entity (§3.1.2).
 * NotFoundError when the tenant is no federation member.
 */
export async function signEntityConfiguration(
  deps: EntityConfigurationDeps,
  tenantId: string,
  entityId: string,
  metadata: Record<string, Record<string, unknown>>,
): Promise<string> {
  const membership = await deps.tenants.federation(tenantId)
  if (!membership) throw new NotFoundError('federation entity', entityId)
  const signer = await deps.keys.signer(tenantId, membership.keyChainId)
  const { keys } = await deps.keys.chainJwks(tenantId, membership.keyChainId)
  const iat = Math.floor(deps.now().getTime() / 1000)
  const trustMarks = membership.trustMarks
    .filter((mark) => subjectOf(mark.trustMark) === entityId)
    .map((mark) => ({ trust_mark_type: mark.trustMarkType, trust_mark: mark.trustMark }))
  const federationEntity = membership.organizationName
    ? { organization_name: membership.organizationName }
    : {}
  return signJws(
    signer,
    { typ: 'entity-statement+jwt', kid: signer.kid },
    {
      iss: entityId,
      sub: entityId,
      iat,
      exp: iat + membership.lifetimeSeconds,
      jwks: { keys: keys.map(({ x5c: _x5c, ...jwk }) => jwk) },
      authority_hints: membership.authorityHints,
      metadata: { ...metadata, federation_entity: federationEntity },
      ...(trustMarks.length ? { trust_marks: trustMarks } : {}),
    },
  )
}

function subjectOf(jwt: string): string | undefined {
  try {
    return decodeJwt(jwt).sub
  } catch {
    return undefined
  }
}
