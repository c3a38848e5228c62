import type { X509Certificate } from 'node:crypto'
import type { JSONWebKeySet } from 'jose'
import type { StatusListEntry } from './status-list-token'
import type { TrustedAuthoritiesQuery, TrustedListAnchors } from './trusted-authorities'

/**
 * A presentation that fails a check: the reason ends up on the session, which only the tenant
 * reads. `toWallet`, when set, is all the presenter is told instead.
 */
export class PresentationRejected extends Error {
  readonly toWallet: string | undefined
  constructor(reason: string, toWallet?: string) {
    super(reason)
    this.toWallet = toWallet
  }
}

/**
 * What the verification of every format gets from the verifier: the trust and the clock of this
 * response, and the status port. The format modules read a credential's status list entry; the
 * verifier fetches, caches and trusts the list (outbound policy, per-process cache).
 */
/** The forms of a status list a credential can name: a Token Status List as JWT or CWT, or a W3C status list credential. */
export type StatusListForm = 'jwt' | 'cwt' | 'bitstring'

export interface PresentationTrust {
  /** The tenant's trust anchors for credential issuers (HAIP 6.1.1). */
  anchors: X509Certificate[]
  /** The configuration's explicit allowance of any issuer: no chain to an anchor, no name check. */
  acceptAnyIssuer: boolean
  now: Date
  /**
   * The configuration's ETSI trusted lists by URL, which an `etsi_tl` Trusted Authorities Query
   * names (OpenID4VP 1.0 §6.1.1.2); absent: no query can match one.
   */
  trustedLists?: ReadonlyMap<string, TrustedListAnchors> | undefined
  /**
   * Resolves when the entry's status is VALID (TSL §8.3, checklist V-33); rejects with
   * PresentationRejected otherwise, an undetermined status included. `form` is the list's form
   * the format's credential names (its verifier says, no caller branches on the format): `jwt` by
   * default; `cwt` first for an mdoc (ISO 18013-5 2nd ed.); `bitstring` for a W3C VC's
   * BitstringStatusListEntry, whose list is a status list credential with the entry's
   * `statusPurpose` (Bitstring Status List §3.2).
   */
  requireValidStatus: (entry: StatusListEntry & { purpose?: string }, form?: StatusListForm) => Promise<void>
  /**
   * The configuration's OpenID Federation trust sources for an issuer without `x5c` (SD-JWT VC, jwt_vc_json):
   * resolves the trust chain of `entityId` (the credential's `iss`) to one of their anchors, and
   * answers the keys of its `openid_credential_issuer` metadata after the policies, or rejects
   * with PresentationRejected naming the reason. `trustedAuthorities` are the query's: with any,
   * the chain must pass through an entity an `openid_federation` one names (OpenID4VP 1.0 §6.1.1).
   * Absent: the configuration names no such source, and an issuer without `x5c` is not trusted.
   */
  federatedIssuer?:
    | ((
        entityId: string,
        trustedAuthorities: TrustedAuthoritiesQuery[] | undefined,
      ) => Promise<JSONWebKeySet>)
    | undefined
}

/** What a credential query adds to the trust of its presentations. */
export interface QueryTrust {
  /**
   * The query's `trusted_authorities` (OpenID4VP 1.0 §6.1.1): the issuer chain must also name
   * one of these authorities, besides chaining to an anchor.
   */
  trustedAuthorities?: TrustedAuthoritiesQuery[] | undefined
}
