import { createHash } from 'node:crypto'
import { signStatusListCwt, signStatusListToken } from '@credential-service/crypto'
import {
  createStatusListRepository,
  type Database,
  type StatusListShape,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { decodeJwt } from 'jose'
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

/** The same list as CWT (TSL §5.2), with its own ETag. */
export interface StatusListCwtToken {
  token: Uint8Array
  etag: string
  signedAt: Date
}

/**
 * The CWT form of a list is made from its stored JWT: the same claims and compressed bytes, one
 * signature more (no packing or compressing). It is kept per process, for the JWT it was made
 * from, so it needs no storage of its own; ECDSA signatures differ from pod to pod, so its ETag
 * is weak (RFC 9110 §8.8.1) and names the JWT it was made from: the same list, not the same bytes.
 */
const cwtByDatabase = new WeakMap<object, Map<string, { jwt: string; cwt: Promise<StatusListCwtToken> }>>()
/** Most CWT forms kept per process; the oldest made goes first. */
const MAX_CWT_FORMS = 1000

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
  let cwtForms = cwtByDatabase.get(deps.db)
  if (!cwtForms) {
    cwtForms = new Map()
    cwtByDatabase.set(deps.db, cwtForms)
  }
  const madeCwts = cwtForms
  const etagOf = (token: string) => `"${createHash('sha256').update(token).digest('base64url').slice(0, 27)}"`

  async function sign(listId: string, attempts = 2): Promise<StatusListToken | undefined> {
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
    // A change committed while this signing ran may have been announced to a verifier that then
    // joined it (F-35): it gets a token with that change, not the one signed before it.
    const after = await lists.get(listId)
    if (attempts > 1 && after && after.version !== list.version) return sign(listId, attempts - 1)
    return { token, etag: etagOf(token), signedAt: now }
  }

  /** The list's current signed token; undefined for a list this tenant does not have. */
  async function token(listId: string): Promise<StatusListToken | undefined> {
    const key = `${tenantId}/${listId}`
    let pending = inFlight.get(key)
    if (!pending) {
      pending = sign(listId).finally(() => inFlight.delete(key))
      inFlight.set(key, pending)
    }
    return pending
  }

  /** The CWT form of a signed JWT list: its claims and `lst` bytes, signed with the list's key chain. */
  async function cwtOf(listId: string, jwt: StatusListToken): Promise<StatusListCwtToken> {
    const list = await lists.get(listId)
    if (!list) throw new Error(`status list ${listId} vanished`)
    const claims = decodeJwt(jwt.token) as {
      sub: string
      iat: number
      exp: number
      ttl: number
      status_list: { bits: number; lst: string }
    }
    const token = await signStatusListCwt({
      signer: await deps.keys.signer(tenantId, list.keyChainId),
      uri: claims.sub,
      bits: claims.status_list.bits,
      lst: Buffer.from(claims.status_list.lst, 'base64url'),
      issuedAt: new Date(claims.iat * 1000),
      expiresAt: new Date(claims.exp * 1000),
      ttlSeconds: claims.ttl,
    })
    return { token, etag: `W/"cwt-${jwt.etag.slice(1)}`, signedAt: jwt.signedAt }
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

    token,

    /** The list's current token in CWT form (TSL §5.2); undefined for a list this tenant does not have. */
    async cwt(listId: string): Promise<StatusListCwtToken | undefined> {
      const jwt = await token(listId)
      if (!jwt) return undefined
      const key = `${tenantId}/${listId}`
      let made = madeCwts.get(key)
      if (made?.jwt !== jwt.token) {
        const cwt = cwtOf(listId, jwt)
        made = { jwt: jwt.token, cwt }
        madeCwts.delete(key)
        madeCwts.set(key, made)
        cwt.catch(() => madeCwts.get(key)?.cwt === cwt && madeCwts.delete(key))
        if (madeCwts.size > MAX_CWT_FORMS) madeCwts.delete(madeCwts.keys().next().value as string)
      }
      return made.cwt
    },
  }
}
