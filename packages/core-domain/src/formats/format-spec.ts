import type { z } from 'zod'
import type { ClaimField } from '../contract/claim-field'
import type { DcqlClaimQuery } from '../contract/dcql-claim'

export type { DcqlClaimQuery }

/** A format's `config` member schema: an object whose `format` is the format's identifier. */
export type FormatConfigSchema = z.ZodType<{ format: string }>
/** A format's DCQL `meta` schema (OpenID4VP 1.0 Appendix B). */
export type FormatMetaSchema = z.ZodType<object>

/** A rule a value breaks, its path relative to the value checked (the caller prefixes it). */
export interface FormatIssue {
  path: string
  message: string
}

/** An input of a configuration editor (the console): one member of the format's own `config`. */
export interface ConfigInput {
  member: string
  label: string
  description: string
  /** A set of values (sent as an array, left out when empty); otherwise one text. */
  list: boolean
  required: boolean
}

/**
 * A credential format as the domain sees it: no crypto, no I/O. One per format in `formats/<name>/`,
 * registered by one line in `registry.ts`, which derives the format enum, the `config` union and
 * the DCQL `meta` union from these; the issuing and verifying runtime of each is in packages/crypto.
 * Typed over the format's own schemas: methods take its own `config` and `meta` (method syntax: a
 * spec is looked up through the registry by the value's own `format`).
 */
export interface FormatSpec<
  S extends FormatConfigSchema = FormatConfigSchema,
  M extends FormatMetaSchema = FormatMetaSchema,
> {
  format: z.infer<S>['format']
  /** The `config` member of its credential configurations (spec §2.2). */
  configSchema: S
  /** The `meta` of its DCQL credential queries (OpenID4VP 1.0 Appendix B). */
  dcqlMetaSchema: M
  /** What people call it (console, messages): `SD-JWT VC`, `mdoc`. */
  title: string
  /** The member of `config` that names the credential type (spec §2.2): `vct`, `docType`. */
  typeMember: string
  /** The editor inputs of its own `config` members, the type member first (spec §2.2). */
  configInputs: ConfigInput[]
  /**
   * The credential type a configuration issues and a presentation of it names (`vct`, `docType`; for
   * jwt_vc_json its sorted `type` values, space-separated).
   */
  typeOf(config: z.infer<S>): string
  /**
   * The type as the format's metadata names it, in the issuer metadata entry (OpenID4VCI 1.0
   * Appendix A) and a TS11 schema URI entry alike: `{ vct }`, `{ doctype }`,
   * `{ credential_definition: { type } }`.
   */
  typeMetadata(config: z.infer<S>): Record<string, unknown>
  /**
   * Each field sits in a namespace (spec §2.3): claims are grouped by it when issued and asked for
   * as [namespace, element] (mdoc); otherwise a field is a path in one JSON object.
   */
  namespacedFields: boolean
  /** The format's own rules of one field beyond its shape and namespace, paths relative to the field. */
  fieldIssues(field: ClaimField): FormatIssue[]
  /** `credential_signing_alg_values_supported` for a key chain signing with `signingAlg` (JOSE name). */
  signingAlgValues(signingAlg: string): (string | number)[]
  /** `cryptographic_binding_methods_supported` of a key-bound configuration (OpenID4VCI 1.0 §12.2.4). */
  bindingMethod: string
  /** The verifier's `vp_formats_supported` entry (OpenID4VP 1.0 §11.1, checklist V-09). */
  vpFormatsSupported: Record<string, unknown>
  /** The DCQL `meta` member this format's queries carry (OpenID4VP 1.0 Appendix B). */
  metaMember: string
  /** The types a DCQL query's own `meta` asks for (registry.ts `queriedTypes` checks it is its own). */
  queriedTypes(meta: z.infer<M>): string[]
  /** The DCQL `meta` asking for these types (a builder's query; empty: one the schema refuses). */
  dcqlMeta(types: string[]): z.infer<M>
  /** A DCQL claims query may say `intent_to_retain` (OpenID4VP 1.0 B.2.4: ISO 18013-5 IntentToRetain). */
  intentToRetain: boolean
  /** Rules of one DCQL claims query of this format (OpenID4VP 1.0 §7), paths relative to the claim. */
  dcqlClaimIssues(claim: DcqlClaimQuery): FormatIssue[]
  /** Fields may be `disclosable` (SD-JWT disclosures, mdoc elements); a VC-JWT is presented whole. */
  selectiveDisclosure: boolean
  /** A credential needs a holder key (mdoc: the MSO's deviceKey); none without key binding otherwise. */
  holderKeyRequired: boolean
  /** Transaction data hashes are checked in its presentations (OpenID4VP 1.0 §8.4). */
  transactionData: boolean
  /** An ISO/IEC 18013-7 Annex C DeviceRequest can ask for it over the DC API. */
  annexC: boolean
  /** SD-JWT VC Type Metadata describes it (the schema metadata service signs it). */
  typeMetadataDocument: boolean
  /** The credential carries the issuer identifier (`iss`), which its signing certificate should name. */
  namesIssuer: boolean
  /**
   * Its signing certificate must name the issuing country (C=) in its subject and issuer, which
   * readers check against the credential (ISO 18013-5 Annex B.1); a key chain without one is refused.
   */
  certificateCountry: boolean
}
