import type { IssuerMetadataConfig } from '../contract/credential-config'
import { CREDENTIAL_FORMATS, type CredentialFormat } from './credential-format'
import type { FormatSpec } from './format-spec'
import { jwtVcJsonSpec } from './jwt-vc-json/spec'
import { mdocSpec } from './mso-mdoc/spec'
import { sdJwtVcSpec } from './sd-jwt-vc/spec'

/**
 * Every credential format, by its identifier (as apps/issuer/src/grants/registry.ts lists the
 * grants): a format missing here is a compile error. Code outside the formats looks a format up
 * here instead of comparing format strings.
 */
export const formatSpecs: { [F in CredentialFormat]: FormatSpec<F> } = {
  'dc+sd-jwt': sdJwtVcSpec,
  mso_mdoc: mdocSpec,
  jwt_vc_json: jwtVcJsonSpec,
}

/**
 * The spec of a format. Its methods take that format's `config`: callers pass the value whose
 * `format` picked it (the conditional types make the map's members look invariant to the compiler).
 */
export const formatSpec = (format: CredentialFormat): FormatSpec => formatSpecs[format] as FormatSpec

/** The credential type of a configuration's `config` (its `vct`, `docType`, …). */
export const credentialTypeOf = (config: IssuerMetadataConfig): string =>
  formatSpec(config.format).typeOf(config)

/** Every format's spec, in the order of CREDENTIAL_FORMATS. */
export const allFormatSpecs = (): FormatSpec[] => CREDENTIAL_FORMATS.map(formatSpec)
