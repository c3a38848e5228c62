import { createHash } from 'node:crypto'
import { signStatusListToken } from '@credential-service/crypto'
import {
  createStatusListRepository,
  type Database,
  type StatusListShape,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'

/**
 * New lists: 2^17 entries of 2 bits (VALID, INVALID, SUSPENDED), 32 KiB before compression. Half
 * of the entries are handed out, so that a random pick finds a free index in two tries at worst,
 * and each credential hides among 131,072 possible ones (TSL §13.2 herd privacy).
 */
export const STATUS_LIST_SHAPE: StatusListShape = { size: 2 ** 17, bits: 2, capacity: 2 ** 16 }
/** How long a relying party may cache a list token (TSL §5.1 `ttl`, and the HTTP max-age). */
export const STATUS_LIST_TTL_SECONDS = 300
/** Lifetime of a list token (`exp`): a verifier cut off from us keeps a day of answers. */
const TOKEN_LIFETIME_SECONDS = 86_400
/** A stored token is signed again after this long even without a change, so `exp` stays far off. */
const TOKEN_REFRESH_SECONDS = 3_600

export interface StatusListToken {
  token: string
  etag: string
  signedAt: Date
}

/**
 * Signing a list costs about 150–300 ms of CPU (2^17 entries packed and compressed), so a signed
 * token is kept with the list and signed again only when a status changed or it is an hour old.
 * Concurrent requests for a list that needs signing share one signing per process.
 */
const signingByDatabase = new WeakMap<object, Map<string, Promise<StatusListToken | undefined>>>()

/** The Token Status Lists of one tenant's issuer: entry allocation at issuance, signed tokens. */
export function createStatusListService(scope: TenantScope<ProtocolDeps>) {
  const { deps, tenantId } = scope
  const issuer = scope.issuerUrl
  const lists = createStatusListRepository(deps.db, tenantId)
  const uriOf = (listId: string) => `${issuer}/status-lists/${listId}`
  let signing = signingByDatabase.get(deps.db)
  if (!signing) {
    signing = new Map()
    signingByDatabase.set(deps.db, signing)
  }
  const inFlight = signing
  const etagOf = (token: string) => `"${createHash('sha256').update(token).digest('base64url').slice(0, 27)}"`

  async function sign(listId: string): Promise<StatusListToken | undefined> {
    const list = await lists.get(listId)
    if (!list) return undefined
    const now = deps.now()
    const fresh =
      list.token !== null &&
      list.tokenVersion === list.version &&
      list.tokenSignedAt !== null &&
      now.getTime() - list.tokenSignedAt.getTime() < TOKEN_REFRESH_SECONDS * 1000
    if (fresh && list.token && list.tokenSignedAt)
      return { token: list.token, etag: etagOf(list.token), signedAt: list.tokenSignedAt }
    // Entries are read after the version: a change in between shows in this token and makes the
    // stored version older than it, so the next request signs again; never the other way round.
    const entries = await lists.setEntries(listId)
    const token = await signStatusListToken({
      signer: await deps.keys.signer(tenantId, list.keyChainId),
      uri: uriOf(listId),
      bits: list.bits as 1 | 2 | 4 | 8,
      size: list.size,
      entries,
      issuedAt: now,
      expiresAt: new Date(now.getTime() + TOKEN_LIFETIME_SECONDS * 1000),
      ttlSeconds: STATUS_LIST_TTL_SECONDS,
    })
    await lists.storeToken(listId, list.version, token, now)
    return { token, etag: etagOf(token), signedAt: now }
  }

  return {
    uriOf,

    /**
     * One status list entry per credential of a batch, each at its own random index (checklist
     * F-34, I-68: distinct and unpredictable, so the copies cannot be linked by their indexes).
     * Inside `tx` the entries go if the transaction does not commit.
     */
    async allocate(
      options: {
        keyChainId: string
        count: number
        sessionId: string
        credentialConfigurationId: string
        handle: string | null
      },
      tx?: Database,
    ): Promise<{ idx: number; uri: string }[]> {
      const repository = tx ? createStatusListRepository(tx, tenantId) : lists
      const allocated = await repository.allocate({ ...options, shape: STATUS_LIST_SHAPE })
      return allocated.map(({ listId, idx }) => ({ idx, uri: uriOf(listId) }))
    },

    /** The list's current signed token; undefined for a list this tenant does not have. */
    async token(listId: string): Promise<StatusListToken | undefined> {
      const key = `${tenantId}/${listId}`
      let pending = inFlight.get(key)
      if (!pending) {
        pending = sign(listId).finally(() => inFlight.delete(key))
        inFlight.set(key, pending)
      }
      return pending
    },
  }
}
