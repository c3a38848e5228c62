import { createHash } from 'node:crypto'
import type { StatusListView } from '@credential-service/crypto'
import { createStatusListRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'
import { STATUS_LIST_TTL_SECONDS } from './status-lists'

/** Lifetime of a signed view (a credential's `validUntil`, `exp`), as of a list token. */
const CREDENTIAL_LIFETIME_SECONDS = 86_400
/** A kept view is signed again after this long even without a change. */
const REFRESH_SECONDS = 3_600
/** Most views kept per process; the oldest signed goes first. */
const MAX_KEPT = 1000

export interface SignedView {
  token: string
  etag: string
  signedAt: Date
}

/**
 * Signed views kept per process, by tenant, list, view and variant, with the list version they
 * show: a status change bumps the version and the next request signs again (no storage needed).
 */
const kept = new WeakMap<object, Map<string, { version: number; signed: SignedView }>>()

/**
 * The status list views of one tenant's status lists that formats name besides the Token Status
 * List (a format runtime's `statusListViews`, e.g. W3C BitstringStatusListCredentials): each list
 * as the view signs it, with the list's key chain. The lists are the Token Status Lists every
 * format shares, so one revocation shows in all forms.
 */
export function createStatusListViewService(scope: TenantScope<ProtocolDeps>) {
  const { deps, tenantId } = scope
  const lists = createStatusListRepository(deps.db, tenantId)
  let byKey = kept.get(deps.db)
  if (!byKey) {
    byKey = new Map()
    kept.set(deps.db, byKey)
  }
  const cache = byKey

  /** The list in `view`'s `variant`; undefined for a list this tenant does not have. */
  async function signedView(
    listId: string,
    view: StatusListView,
    variant: string,
  ): Promise<SignedView | undefined> {
    const list = await lists.get(listId)
    if (!list) return undefined
    const key = `${tenantId}/${listId}/${view.name}/${variant}`
    const now = deps.now()
    const held = cache.get(key)
    if (
      held &&
      held.version === list.version &&
      now.getTime() - held.signed.signedAt.getTime() < REFRESH_SECONDS * 1000
    )
      return held.signed
    // Entries are read after the version, as for list tokens: a change in between is in this one.
    const entries = await lists.setEntries(listId)
    const token = await view.sign({
      signer: await deps.keys.signer(tenantId, list.keyChainId),
      issuer: scope.issuerUrl,
      listUri: `${scope.issuerUrl}/status-lists/${listId}`,
      variant,
      size: list.size,
      entries,
      issuedAt: now,
      expiresAt: new Date(now.getTime() + CREDENTIAL_LIFETIME_SECONDS * 1000),
      ttlSeconds: STATUS_LIST_TTL_SECONDS,
    })
    const signed = {
      token,
      etag: `"${createHash('sha256').update(token).digest('base64url').slice(0, 27)}"`,
      signedAt: now,
    }
    cache.delete(key)
    cache.set(key, { version: list.version, signed })
    if (cache.size > MAX_KEPT) cache.delete(cache.keys().next().value as string)
    return signed
  }

  return { signedView }
}
