import type { z } from 'zod'
import type { FormatSpec } from './format-spec'
import { jwtVcJsonSpec } from './jwt-vc-json/spec'
import { mdocSpec } from './mso-mdoc/spec'
import { sdJwtVcSpec } from './sd-jwt-vc/spec'

/**
 * Every credential format, one line each (as apps/issuer/src/grants/registry.ts lists the grants).
 * A new format is its folder `formats/<name>/` plus its line here: the format enum, the `config`
 * union and the DCQL `meta` union follow from this list, and the compiler then names every map
 * typed over the enum that lacks it (the runtimes in packages/crypto, the conformance test cases).
 * Code outside the formats looks a format up here instead of comparing format strings.
 */
const FORMAT_SPECS = [sdJwtVcSpec, mdocSpec, jwtVcJsonSpec] as const

type Registered = typeof FORMAT_SPECS
type RegisteredSpec = Registered[number]
/** A member of each spec, as a tuple in registration order (mapped over a type parameter, so a tuple). */
type Each<T extends readonly RegisteredSpec[], P extends keyof RegisteredSpec> = {
  [K in keyof T]: T[K] extends RegisteredSpec ? T[K][P] : never
}

/** The credential formats this service issues and verifies, by their OpenID4VCI / OpenID4VP identifiers. */
export type CredentialFormat = RegisteredSpec['format']
export const CREDENTIAL_FORMATS = FORMAT_SPECS.map((spec) => spec.format) as unknown as Each<
  Registered,
  'format'
>

/** Each format's `config` member schema, in registration order: `zIssuerMetadataConfig` is their union. */
export const configSchemas = FORMAT_SPECS.map((spec) => spec.configSchema) as unknown as Each<
  Registered,
  'configSchema'
>

/** Each format's DCQL `meta` schema, in registration order: a credential query's `meta` is one of them. */
export const dcqlMetaSchemas = FORMAT_SPECS.map((spec) => spec.dcqlMetaSchema) as unknown as Each<
  Registered,
  'dcqlMetaSchema'
>
/** A DCQL credential query's `meta`, of any format. */
export type DcqlMeta = z.infer<RegisteredSpec['dcqlMetaSchema']>

/** The formats and what people call them, for descriptions: "`dc+sd-jwt`: SD-JWT VC; …". */
export const formatList = FORMAT_SPECS.map((spec) => `\`${spec.format}\`: ${spec.title}`).join('; ')

/** Every format's spec by its identifier. */
export const formatSpecs = Object.fromEntries(FORMAT_SPECS.map((spec) => [spec.format, spec])) as {
  [S in RegisteredSpec as S['format']]: S
}

/** A registered spec, seen without its format's own types: its methods take that format's values. */
export type AnyFormatSpec = FormatSpec & { format: CredentialFormat }

/**
 * The spec of a format. Its methods take that format's `config` and `meta`: callers pass the
 * value whose `format` picked it (the map's members are typed over their own schemas).
 */
export const formatSpec = (format: CredentialFormat): AnyFormatSpec => formatSpecs[format] as AnyFormatSpec

/** The credential type of a configuration's `config` (its `vct`, `docType`, …). */
export const credentialTypeOf = (config: { format: CredentialFormat }): string =>
  formatSpec(config.format).typeOf(config)

/** The types a DCQL credential query asks for; undefined when its `meta` is not its format's. */
export function queriedTypes(query: { format: CredentialFormat; meta: DcqlMeta }): string[] | undefined {
  const spec = formatSpec(query.format)
  return spec.metaMember in query.meta ? spec.queriedTypes(query.meta) : undefined
}

/** The DCQL `meta` of a query of `format` asking for `types`. */
export const dcqlMetaOf = (format: CredentialFormat, types: string[]): DcqlMeta =>
  formatSpec(format).dcqlMeta(types) as DcqlMeta

/** Every format's spec, in registration order. */
export const allFormatSpecs = (): AnyFormatSpec[] => CREDENTIAL_FORMATS.map(formatSpec)
