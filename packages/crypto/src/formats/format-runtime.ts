import type {
  ClaimField,
  CredentialFormat,
  DcqlCredentialQuery,
  IssuerMetadataConfigOf,
} from '@credential-service/core-domain'
import type { JWK } from 'jose'
import type { MdocTranscript } from '../mdoc/verify'
import type { PresentationTrust } from '../presentation'
import type { Signer } from '../signer'

/** What one credential of a configuration is issued from (OpenID4VCI 1.0 §8.3). */
export interface IssueCredentialOptions<F extends CredentialFormat = CredentialFormat> {
  signer: Signer
  /** The credential issuer identifier: SD-JWT VC `iss`. */
  issuer: string
  config: IssuerMetadataConfigOf<F>
  fields: ClaimField[]
  /** Claims validated against the fields (per namespace for mdoc). */
  claims: Record<string, unknown>
  /**
   * The verified holder key; undefined for a credential without key binding, which a format whose
   * spec says `holderKeyRequired` never gets (the issuer refuses first).
   */
  holderJwk: JWK | undefined
  issuedAt: Date
  expiresAt: Date
  /** The credential's status list entry (TSL §6), when the configuration manages status. */
  status: { idx: number; uri: string } | undefined
}

/**
 * What a presentation must be bound to (OpenID4VP 1.0 §14.1): the request's nonce, the audiences a
 * KB-JWT may name, the mdoc SessionTranscript of the channel, and the transaction data sent.
 */
export interface HolderBinding {
  nonce: string
  /** The values the KB-JWT `aud` may take (one, unless a compatibility setting adds another). */
  audiences: readonly string[]
  mdocTranscript: MdocTranscript
  /** Base64url transaction data strings sent with the request, if any. */
  transactionData: string[] | null
}

/** One presentation of a `vp_token` against the credential query it answers. */
export interface VerifyPresentationOptions {
  /** The presentation as the `vp_token` carries it (OpenID4VP §8.1), or decrypted DeviceResponse bytes. */
  presentation: string | Uint8Array
  query: DcqlCredentialQuery
  binding: HolderBinding
  trust: PresentationTrust
}

/** What a status list view is signed from: one of the issuer's status lists, as it is now. */
export interface SignStatusListViewOptions {
  signer: Signer
  issuer: string
  /** The list's URI (its Token Status List's); the view is published under it. */
  listUri: string
  /** Which of the view's variants. */
  variant: string
  size: number
  /** The list's entries that are not VALID, with their status (TSL §7.1: 1 INVALID, 2 SUSPENDED). */
  entries: readonly { idx: number; status: number }[]
  issuedAt: Date
  expiresAt: Date
  ttlSeconds: number
}

/**
 * Another form of the issuer's status lists that a format's credentials name, besides the Token
 * Status List every format shares: served at `{list URI}/{name}/{variant}` by the issuer.
 */
export interface StatusListView {
  /** Its path segment under a list's URI. */
  name: string
  /** The variants it is served in (W3C Bitstring Status List: one per status purpose). */
  variants: readonly string[]
  /** Its media type. */
  contentType: string
  sign(options: SignStatusListViewOptions): Promise<string>
}

/**
 * A credential format's crypto, registered once per format in `registry.ts`: the pure rules of
 * each are its spec in core-domain (`formats/<name>/spec.ts`).
 */
export interface FormatRuntime<F extends CredentialFormat = CredentialFormat> {
  format: F
  /** Signs one credential; answers it as the credential response carries it (§8.3). */
  issue(options: IssueCredentialOptions<F>): Promise<string>
  /**
   * Verifies one presentation: the issuer's signature and chain under `trust`, the type the query
   * asks for, the holder binding and the status (through `trust.requireValidStatus`). Answers the
   * disclosed claims; rejects with PresentationRejected.
   */
  verify(options: VerifyPresentationOptions): Promise<Record<string, unknown>>
  /** The status list forms its credentials name beyond the Token Status List (none: that one only). */
  statusListViews: readonly StatusListView[]
}
