import {
  ConflictError,
  type CredentialStatusChanged,
  type CredentialStatusValue,
  NotFoundError,
  type Page,
  type Principal,
  type StatusList,
  type StatusListQuery,
} from '@credential-service/core-domain'
import {
  createIssuanceSessionRepository,
  createStatusListRepository,
  createTenantRepository,
  type Database,
  type EntrySelector,
  recordAudit,
  STATUS_INVALID,
  STATUS_SUSPENDED,
  STATUS_VALID,
  type StatusListRow,
} from '@credential-service/db-schema'

export interface CredentialStatusServiceDeps {
  db: Database
  /** To give each list the URI the issuer publishes it at. */
  publicUrl: string
}

/** Entry values of the status list draft (§7.1). */
const STATUS_VALUES: Record<CredentialStatusValue, number> = {
  valid: STATUS_VALID,
  revoked: STATUS_INVALID,
  suspended: STATUS_SUSPENDED,
}

/**
 * Revokes, suspends and reinstates issued credentials through their status list entries, by
 * issuance session or by the offer's business handle. Revocation is final: reinstating or
 * suspending a revoked credential is 409. Every change is audited; the published lists show it
 * once their token is signed again (on the next fetch).
 */
export function createCredentialStatusService(
  deps: CredentialStatusServiceDeps,
  tenantId: string,
  actor: Principal,
) {
  const lists = createStatusListRepository(deps.db, tenantId)

  async function change(
    selector: EntrySelector,
    status: CredentialStatusValue,
    notFound: () => Promise<never>,
  ): Promise<CredentialStatusChanged> {
    const result = await lists.change(selector, STATUS_VALUES[status], (tx, changed) =>
      recordAudit(tx, {
        tenantId,
        actorClientId: actor.clientId,
        action: 'update',
        resourceType: 'credential-status',
        resourceId: 'sessionId' in selector ? selector.sessionId : selector.handle,
        detail: { fields: ['status'], status, by: 'sessionId' in selector ? 'session' : 'handle', changed },
      }),
    )
    if (result.outcome === 'none') return notFound()
    if (result.outcome === 'revoked-is-final')
      throw new ConflictError('a revoked credential stays revoked: revocation is final')
    return { status, credentials: result.credentials, changed: result.changed }
  }

  return {
    /** Every credential with a status list entry issued in the session. */
    async ofSession(sessionId: string, status: CredentialStatusValue): Promise<CredentialStatusChanged> {
      return change({ sessionId }, status, async () => {
        if (await createIssuanceSessionRepository(deps.db, tenantId).get(sessionId))
          throw new ConflictError('this session issued no credential with a status list entry')
        throw new NotFoundError('session', sessionId)
      })
    },

    /** Every credential with a status list entry issued for offers with this `statusHandle`. */
    async ofHandle(handle: string, status: CredentialStatusValue): Promise<CredentialStatusChanged> {
      return change({ handle }, status, async () => {
        throw new NotFoundError('credentials with status handle', handle)
      })
    },

    /** The tenant's status lists, with the URI each is published at. */
    async lists(query: StatusListQuery): Promise<Page<StatusList>> {
      // An operator naming a tenant that does not exist: 404, as for the other collections.
      if (!(await createTenantRepository(deps.db).get(tenantId))) throw new NotFoundError('tenant', tenantId)
      const page = await lists.list(query)
      return { ...page, items: page.items.map(toStatusList) }
    },

    async list(id: string): Promise<StatusList> {
      const row = await lists.get(id)
      if (!row) throw new NotFoundError('status list', id)
      return toStatusList(row)
    },
  }

  function toStatusList(row: StatusListRow): StatusList {
    return {
      id: row.id,
      keyChainId: row.keyChainId,
      uri: `${deps.publicUrl}/issuers/${tenantId}/status-lists/${row.id}`,
      bits: row.bits,
      size: row.size,
      capacity: row.capacity,
      allocated: row.allocated,
      version: row.version,
      signedAt: row.tokenSignedAt?.toISOString() ?? null,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    }
  }
}
