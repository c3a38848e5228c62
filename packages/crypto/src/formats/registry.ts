import type { CredentialFormat } from '@credential-service/core-domain'
import type { FormatRuntime, StatusListView } from './format-runtime'
import { jwtVcJsonRuntime } from './jwt-vc-json/runtime'
import { mdocRuntime } from './mso-mdoc/runtime'
import { sdJwtVcRuntime } from './sd-jwt-vc/runtime'

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

/**
 * The status list views of every format (the issuer serves each under its lists). A function, so
 * that a bundle importing the registry for something else keeps none of it (no top-level work).
 */
export const allStatusListViews = (): StatusListView[] =>
  Object.values(formatRuntimes).flatMap((runtime) => runtime.statusListViews)
