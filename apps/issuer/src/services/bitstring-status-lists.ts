import { createHash } from 'node:crypto'
import { type BitstringPurpose, bitstringStatusListUri } from '@credential-service/core-domain'
import { signBitstringStatusList } from '@credential-service/crypto'
import { createStatusListRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'
import { STATUS_LIST_TTL_SECONDS } from './status-lists'

/** Lifetime of a status list credential (`validUntil`, `exp`), as of a list token. */
const CREDENTIAL_LIFETIME_SECONDS = 86_400
/** A kept credential is signed again after this long even without a change. */
const REFRESH_SECONDS = 3_600
/** Most credentials kept per process; the oldest signed goes first. */
const MAX_KEPT = 1000
/** The status each purpose's bit stands for in a list's entries (1 INVALID, 2 SUSPENDED). */
const STATUS_OF: Record<BitstringPurpose, number> = { revocation: 1, suspension: 2 }

export interface StatusListCredential {
  token: string
  etag: string
  signedAt: Date
}

/**
 * Signed credentials kept per process, by tenant, list and purpose, with the list version they
 * show: a status change bumps the version and the next request signs again (no storage needed).
 */
const kept = new WeakMap<object, Map<string, { version: number; credential: StatusListCredential }>>()

/**
 * The W3C status list credentials of one tenant's status lists (Bitstring Status List §2.2): for
 * each list and purpose, its entries of that status as set bits, signed with the list's key chain.
 * jwt_vc_json credentials name them (formats/jwt-vc-json/status.ts); the lists are the Token
 * Status Lists every format shares, so one revocation shows in both.
 */
export function createBitstringStatusListService(scope: TenantScope<ProtocolDeps>) {
  const { deps, tenantId } = scope
  const lists = createStatusListRepository(deps.db, tenantId)
  let byKey = kept.get(deps.db)
  if (!byKey) {
    byKey = new Map()
    kept.set(deps.db, byKey)
  }
  const cache = byKey

  /** The list's status list credential for `purpose`; undefined for a list this tenant does not have. */
  async function credential(
    listId: string,
    purpose: BitstringPurpose,
  ): Promise<StatusListCredential | undefined> {
    const list = await lists.get(listId)
    if (!list) return undefined
    const key = `${tenantId}/${listId}/${purpose}`
    const now = deps.now()
    const held = cache.get(key)
    if (
      held &&
      held.version === list.version &&
      now.getTime() - held.credential.signedAt.getTime() < REFRESH_SECONDS * 1000
    )
      return held.credential
    // Entries are read after the version, as for list tokens: a change in between is in this one.
    const entries = await lists.setEntries(listId)
    const token = await signBitstringStatusList({
      signer: await deps.keys.signer(tenantId, list.keyChainId),
      issuer: scope.issuerUrl,
      uri: bitstringStatusListUri(`${scope.issuerUrl}/status-lists/${listId}`, purpose),
      purpose,
      size: list.size,
      set: entries.filter((entry) => entry.status === STATUS_OF[purpose]).map((entry) => entry.idx),
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
    cache.set(key, { version: list.version, credential: signed })
    if (cache.size > MAX_KEPT) cache.delete(cache.keys().next().value as string)
    return signed
  }

  return { credential }
}
