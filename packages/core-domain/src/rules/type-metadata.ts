import type { ClaimField, CredentialConfigData, FieldDisplay } from '../contract/credential-config'
import type { TypeMetadata } from '../contract/schema-metadata'
import { deriveClaimsJsonSchema } from './claims-schema'

type Config = Pick<CredentialConfigData, 'id' | 'description' | 'config' | 'fields'>
/** The `vct` of an SD-JWT VC configuration; the id of any other (the caller refuses those). */
const vctOf = (config: Config) => ('vct' in config.config ? config.config.vct : config.id)
type JsonSchema = Record<string, unknown>

/**
 * Claims an SD-JWT VC carries besides the configuration's fields (SD-JWT VC §3.2.2), so the
 * schema validates a whole credential after its disclosures are resolved, not only the claims.
 */
const REGISTERED_CLAIMS: Record<string, JsonSchema> = {
  iss: { type: 'string' },
  sub: { type: 'string' },
  vct: { type: 'string' },
  'vct#integrity': { type: 'string' },
  iat: { type: 'number' },
  nbf: { type: 'number' },
  exp: { type: 'number' },
  cnf: { type: 'object' },
  status: { type: 'object' },
}

/**
 * JSON Schema of a credential of an SD-JWT VC configuration, for a type metadata `schema`: the
 * claims schema derived from `fields` (spec §2.1, {@link deriveClaimsJsonSchema}) with the
 * registered claims allowed beside them and `vct` required.
 */
export function deriveCredentialJsonSchema(config: Config): JsonSchema {
  const claims = deriveClaimsJsonSchema(config) as JsonSchema & {
    properties?: Record<string, JsonSchema>
    required?: string[]
  }
  return {
    ...claims,
    title: `Credential of type ${vctOf(config)}`,
    properties: { ...REGISTERED_CLAIMS, ...claims.properties },
    required: ['vct', ...(claims.required ?? [])],
  }
}

function claimDisplay(display: FieldDisplay) {
  return 'lang' in display
    ? { locale: display.lang, label: display.label }
    : { locale: display.locale, label: display.name }
}

function claimMetadata(field: ClaimField) {
  return {
    path: field.path,
    ...(field.display?.length ? { display: field.display.map(claimDisplay) } : {}),
    // The issuer discloses exactly the `disclosable` fields; everything else is always plain.
    sd: field.disclosable ? ('always' as const) : ('never' as const),
    ...(field.mandatory ? { mandatory: true } : {}),
  }
}

/** OID4VCI credential display members that type metadata keeps under `rendering.simple`. */
function typeDisplay(display: Record<string, unknown> & { name: string; locale: string }) {
  const { name, locale, description, logo, background_color, text_color } = display
  const simple = Object.fromEntries(
    Object.entries({ logo, background_color, text_color }).filter(([, value]) => value !== undefined),
  )
  return {
    locale,
    name,
    ...(typeof description === 'string' ? { description } : {}),
    ...(Object.keys(simple).length ? { rendering: { simple } } : {}),
  }
}

/**
 * The SD-JWT VC Type Metadata (draft-ietf-oauth-sd-jwt-vc §"Type Metadata") of a `dc+sd-jwt`
 * configuration: its `vct`, display, one claim entry per field, and the derived JSON Schema.
 * The caller checks the format: an mdoc configuration has no vct.
 */
export function deriveTypeMetadata(config: Config): TypeMetadata {
  const [first] = config.config.display ?? []
  return {
    vct: vctOf(config),
    name: first?.name ?? config.id,
    ...(config.description ? { description: config.description } : {}),
    ...(config.config.display?.length ? { display: config.config.display.map(typeDisplay) } : {}),
    claims: config.fields.map(claimMetadata),
    schema: deriveCredentialJsonSchema(config),
  }
}

type Identifier = bigint | string

function parseSemver(version: string): { core: bigint[]; pre: Identifier[] } {
  const [withoutBuild = ''] = version.split('+', 1)
  const dash = withoutBuild.indexOf('-')
  const core = dash === -1 ? withoutBuild : withoutBuild.slice(0, dash)
  const pre = dash === -1 ? [] : withoutBuild.slice(dash + 1).split('.')
  return {
    core: core.split('.').map((part) => BigInt(part)),
    pre: pre.map((part) => (/^\d+$/.test(part) ? BigInt(part) : part)),
  }
}

const sign = (a: Identifier, b: Identifier): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Precedence of two valid semantic versions (semver.org 2.0.0 §11): negative, zero or positive.
 * Build metadata is ignored; a pre-release is lower than its release.
 */
export function compareSemver(a: string, b: string): number {
  const left = parseSemver(a)
  const right = parseSemver(b)
  for (let i = 0; i < 3; i++) {
    const order = sign(left.core[i] ?? 0n, right.core[i] ?? 0n)
    if (order) return order
  }
  if (!left.pre.length || !right.pre.length) return right.pre.length - left.pre.length
  for (let i = 0; i < Math.max(left.pre.length, right.pre.length); i++) {
    const x = left.pre[i]
    const y = right.pre[i]
    if (x === undefined) return -1
    if (y === undefined) return 1
    // Numeric identifiers are lower than alphanumeric ones (§11.4.3).
    if (typeof x !== typeof y) return typeof x === 'bigint' ? -1 : 1
    const order = sign(x, y)
    if (order) return order
  }
  return 0
}
