import {
  ConflictError,
  checkOutboundUrl,
  isFetchedTrustListSource,
  NotFoundError,
  type Principal,
  type TrustList,
  type TrustListData,
  type ValidationIssue,
} from '@credential-service/core-domain'
import {
  createTrustListRepository,
  type Executor,
  lockTenant,
  recordAudit,
  type TrustListRow,
  trustListColumns,
} from '@credential-service/db-schema'
import { pemIssues } from './anchor-lists'
import { type ConfigServiceDeps, collection, crud, refuse } from './config-service'

/**
 * Fetched lists (etsi-tl, etsi-lotl, lote) one tenant may hold: each costs every refresh interval
 * a download of up to TRUST_LIST_MAX_BYTES and seconds of a worker thread (docs/trust-lists.md).
 */
export const MAX_FETCHED_TRUST_LISTS = 20

/**
 * Refuses a save that adds a fetched list (a new one, or a `pem` one becoming fetched) past
 * MAX_FETCHED_TRUST_LISTS; serialised per tenant until `tx` ends. Replacing a fetched list adds none.
 */
export async function refuseFetchedListPastBound(
  repo: ReturnType<typeof createTrustListRepository>,
  tenantId: string,
  input: TrustListData,
  tx: Executor,
): Promise<void> {
  if (!isFetchedTrustListSource(input.source)) return
  await lockTenant(tx, tenantId)
  const previous = (await repo.row(input.id, tx)) as TrustListRow | undefined
  if (previous && isFetchedTrustListSource(previous.source)) return
  const others = await repo.countFetched(input.id, tx)
  if (others >= MAX_FETCHED_TRUST_LISTS)
    throw new ConflictError(
      `the tenant holds ${others} fetched trust lists, the most it may (${MAX_FETCHED_TRUST_LISTS}); delete one or use a pem list`,
    )
}

export function trustListIssues(
  input: TrustListData,
  deps: Pick<ConfigServiceDeps, 'outbound'>,
): ValidationIssue[] {
  const source = input.source
  if (source.type === 'pem') return pemIssues(source.certificates, 'body.source.certificates')
  if (source.type === 'openid-federation')
    return checkOutboundUrl(source.trustAnchor, deps.outbound, 'body.source.trustAnchor')
  return [
    ...checkOutboundUrl(source.url, deps.outbound, 'body.source.url'),
    ...pemIssues(source.signerCertificates, 'body.source.signerCertificates'),
  ]
}

/**
 * Trust lists: certificates given in PEM, or an ETSI TS 119 612 list the refresh job fetches.
 * Deleting one that a presentation configuration or a wallet provider names is refused (409).
 */
export function createTrustListService(deps: ConfigServiceDeps, tenantId: string, actor: Principal) {
  const repo = createTrustListRepository(deps.db, tenantId)
  const base = collection<TrustList>(deps, tenantId, actor, 'trust-list', repo)
  const save = (input: TrustListData, mode: 'create' | 'replace') => {
    refuse(trustListIssues(input, deps), 'trust list')
    return base.save(input.id, mode, async (tx) => {
      await refuseFetchedListPastBound(repo, tenantId, input, tx)
      const previous = (await repo.row(input.id, tx)) as TrustListRow | undefined
      return trustListColumns(input, previous, new Date())
    })
  }
  return {
    ...crud(base, save),
    async delete(id: string): Promise<void> {
      await deps.db.transaction(async (tx) => {
        const users = await repo.lockForDelete(id, tx)
        if (users === undefined) throw new NotFoundError('trust list', id)
        const names = (ids: string[]) => ids.map((user) => `'${user}'`).join(', ')
        const named = [
          users.presentationConfigs.length
            ? `presentation configuration(s) ${names(users.presentationConfigs)}`
            : undefined,
          users.walletProviders.length ? `wallet provider(s) ${names(users.walletProviders)}` : undefined,
        ].filter((part) => part !== undefined)
        if (named.length)
          throw new ConflictError(
            `trust list '${id}' is named by ${named.join(' and ')}; remove it from their trustListIds first`,
          )
        await repo.delete(id, tx)
        await recordAudit(tx, {
          tenantId,
          actorClientId: actor.clientId,
          action: 'delete',
          resourceType: 'trust-list',
          resourceId: id,
        })
      })
    },
  }
}
