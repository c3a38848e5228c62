import type { CredentialFormat } from '@credential-service/core-domain'
import type { FormatRuntime } from './format-runtime'
import { jwtVcJsonRuntime } from './jwt-vc-json'
import { mdocRuntime } from './mso-mdoc'
import { sdJwtVcRuntime } from './sd-jwt-vc'

/**
 * Every credential format's runtime, by its identifier (core-domain's `formatSpecs` holds the pure
 * rules of each): a format missing here is a compile error.
 */
export const formatRuntimes: { [F in CredentialFormat]: FormatRuntime<F> } = {
  'dc+sd-jwt': sdJwtVcRuntime,
  mso_mdoc: mdocRuntime,
  jwt_vc_json: jwtVcJsonRuntime,
}

/**
 * The runtime of a format. It issues from that format's `config`: callers pass the configuration
 * whose `format` picked it (the conditional types make the map's members look invariant).
 */
export const formatRuntime = (format: CredentialFormat): FormatRuntime =>
  formatRuntimes[format] as FormatRuntime
