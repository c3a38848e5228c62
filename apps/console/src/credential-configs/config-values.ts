import {
  allFormatSpecs,
  type ClaimField,
  type CredentialConfigInput,
  type CredentialFormat,
  type FieldDisplay,
  type FieldType,
  formatSpec,
} from '@credential-service/core-domain'

/** One label of a field or of the credential, per locale. */
export interface DisplayRow {
  locale: string
  name: string
}

/** A credential display entry; `extra` keeps the members the form does not edit (logo, colours). */
export interface CredentialDisplayRow extends DisplayRow {
  extra: Record<string, unknown>
}

/** A row of the field editor: one `fields[]` entry (ClaimFieldDefinitionDto, spec §2.3) as form inputs. */
export interface FieldRow {
  /** Dotted (`address.street`), or a JSON array when a segment holds a dot or is empty. */
  path: string
  type: FieldType
  mandatory: boolean
  disclosable: boolean
  /** Formats whose fields have a namespace only (mso_mdoc); left out of the body of the others. */
  namespace: string
  display: DisplayRow[]
  /** Text for string, date and date-time fields; JSON for the other types; empty: no default. */
  defaultValue: string
}

/** The credential configuration editor's values: the body of POST /api/credentials as form inputs. */
export type CredentialConfigValues = {
  id: string
  description: string
  config: {
    format: CredentialFormat
    /**
     * Each format's own members by name (FormatSpec `configInputs`: `vct`, `docType`, `type`, …),
     * a text or a list, kept while the format is switched.
     */
    members: Record<string, string | string[]>
    scope: string
    display: CredentialDisplayRow[]
  }
  fields: FieldRow[]
  keyChainId: string
  attributeProviderId: string
  webhookEndpointId: string
  lifetimeSeconds: number | string
  keyBinding: boolean
  statusManagement: boolean
  batchSize: number | string
  refreshTokens: boolean
  dpop: 'optional' | 'required'
  walletAttestation: 'optional' | 'required'
  userAuthentication: {
    enabled: boolean
    loginProviderId: string
    claims: { field: string; claim: string }[]
  }
  keyAttestation: { enabled: boolean; required: boolean; keyStorage: string[]; userAuthentication: string[] }
}

/** Types whose default value is typed as plain text; the others take JSON. */
const TEXT_TYPES: readonly FieldType[] = ['string', 'date', 'date-time']

const optional = (value: string): string | undefined => (value.trim() === '' ? undefined : value.trim())

/**
 * A login claim as typed: a JSON array is a presentation's claims path (kept as is, nulls and
 * indexes too), anything else a claim name or dotted path.
 */
export function loginClaimSource(text: string): string | (string | number | null)[] {
  const trimmed = text.trim()
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed)
      if (Array.isArray(parsed)) return parsed as (string | number | null)[]
    } catch {
      // Not JSON: sent as typed, and the API names the problem.
    }
  }
  return trimmed
}

/** A claim path as the editor shows it: dotted, unless a segment could not survive the split. */
export function pathText(path: readonly string[]): string {
  return path.some((part) => part === '' || part.includes('.') || part.startsWith('['))
    ? JSON.stringify(path)
    : path.join('.')
}

/** The claim path of the editor's text: a JSON array, or dotted segments (empty ones left for zod to refuse). */
export function parsePath(text: string): string[] {
  const trimmed = text.trim()
  if (trimmed === '') return []
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed)
      if (Array.isArray(parsed)) return parsed.map(String)
    } catch {
      // Not JSON after all: read as dotted segments, which names the problem on the path.
    }
  }
  return trimmed.split('.')
}

/** A default value of the editor's text, typed as the field's type says; a text that is not JSON stays text. */
export function parseDefault(type: FieldType, text: string): unknown {
  if (text.trim() === '') return undefined
  if (TEXT_TYPES.includes(type)) return text
  try {
    return JSON.parse(text)
  } catch {
    // The API names the value's type mismatch on `fields.N.defaultValue` (checkCredentialConfig).
    return text
  }
}

export function defaultText(type: FieldType, value: unknown): string {
  if (value === undefined) return ''
  return TEXT_TYPES.includes(type) && typeof value === 'string' ? value : JSON.stringify(value)
}

const displayRow = (display: FieldDisplay): DisplayRow =>
  'lang' in display
    ? { locale: display.lang, name: display.label }
    : { locale: display.locale, name: display.name }

/** One field of a row; the namespace only where the format's fields have one (mso_mdoc). */
export function fieldOfRow(row: FieldRow, format: CredentialFormat): ClaimField {
  return {
    path: parsePath(row.path),
    type: row.type,
    ...(row.mandatory ? { mandatory: true } : {}),
    ...(row.disclosable && formatSpec(format).selectiveDisclosure ? { disclosable: true } : {}),
    ...(formatSpec(format).namespacedFields && optional(row.namespace)
      ? { namespace: row.namespace.trim() }
      : {}),
    ...(row.display.length
      ? { display: row.display.map((label) => ({ name: label.name, locale: label.locale.trim() })) }
      : {}),
    ...(parseDefault(row.type, row.defaultValue) !== undefined
      ? { defaultValue: parseDefault(row.type, row.defaultValue) }
      : {}),
  }
}

export function rowOfField(field: ClaimField): FieldRow {
  return {
    path: pathText(field.path),
    type: field.type,
    mandatory: field.mandatory === true,
    disclosable: field.disclosable === true,
    namespace: field.namespace ?? '',
    display: (field.display ?? []).map(displayRow),
    defaultValue: defaultText(field.type, field.defaultValue),
  }
}

/**
 * A new row: mandatory (a field is added to be issued; an optional one is the exception, and
 * offers of all-optional fields may carry no claim at all), disclosable by default for SD-JWT VC
 * (privacy by default), in the last row's namespace for mdoc.
 */
export function newFieldRow(previous?: FieldRow): FieldRow {
  return {
    path: '',
    type: 'string',
    mandatory: true,
    disclosable: true,
    namespace: previous?.namespace ?? '',
    display: [],
    defaultValue: '',
  }
}

/** The request body (CredentialConfigDefinition) of the editor's values: empty optional inputs left out. */
export function configBody(values: CredentialConfigValues): CredentialConfigInput {
  const { config, userAuthentication, keyAttestation } = values
  const claims = userAuthentication.claims.filter((row) => row.field.trim() || row.claim.trim())
  return withoutUndefined({
    id: values.id.trim(),
    description: optional(values.description),
    // Only the format's own members; its type left empty, the API names it (formatMemberIssues).
    config: {
      format: config.format,
      ...ownMembers(config),
      scope: optional(config.scope),
      display: config.display.length
        ? config.display.map((row) => ({ ...row.extra, name: row.name, locale: row.locale.trim() }))
        : undefined,
    } as CredentialConfigInput['config'],
    fields: values.fields.map((row) => fieldOfRow(row, config.format)),
    keyChainId: values.keyChainId.trim(),
    attributeProviderId: optional(values.attributeProviderId),
    webhookEndpointId: optional(values.webhookEndpointId),
    lifetimeSeconds: Number(values.lifetimeSeconds),
    keyBinding: values.keyBinding,
    statusManagement: values.statusManagement,
    batchSize: Number(values.batchSize),
    refreshTokens: values.refreshTokens,
    dpop: values.dpop,
    walletAttestation: values.walletAttestation,
    userAuthentication: userAuthentication.enabled
      ? {
          loginProviderId: userAuthentication.loginProviderId.trim(),
          claims: claims.length
            ? Object.fromEntries(claims.map((row) => [row.field.trim(), loginClaimSource(row.claim)]))
            : undefined,
        }
      : undefined,
    keyAttestation: keyAttestation.enabled
      ? {
          required: keyAttestation.required,
          keyStorage: keyAttestation.keyStorage.length ? keyAttestation.keyStorage : undefined,
          userAuthentication: keyAttestation.userAuthentication.length
            ? keyAttestation.userAuthentication
            : undefined,
        }
      : undefined,
  })
}

/** The object without its undefined members, at every depth: the body as JSON would carry it. */
function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutUndefined) as T
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .map(([name, member]) => [name, withoutUndefined(member)]),
  ) as T
}

/** The format's own `config` members of the editor's values: empty ones left out. */
function ownMembers(config: CredentialConfigValues['config']): Record<string, string | string[]> {
  const members: Record<string, string | string[]> = {}
  for (const { member, list } of formatSpec(config.format).configInputs) {
    const value = config.members[member] ?? (list ? [] : '')
    const given = Array.isArray(value) ? (value.length ? value : undefined) : optional(value)
    if (given !== undefined) members[member] = given
  }
  return members
}

/** Every format's members of a stored `config` (another format's empty): a text or a list each. */
function membersOf(meta: CredentialConfigInput['config'] | undefined): Record<string, string | string[]> {
  const stored = (meta ?? {}) as Record<string, unknown>
  const members: Record<string, string | string[]> = {}
  for (const { member, list } of allFormatSpecs().flatMap((spec) => spec.configInputs)) {
    const value = stored[member]
    if (list) members[member] = Array.isArray(value) ? value.map(String) : []
    else members[member] = value === undefined ? '' : String(value)
  }
  return members
}

/** The API paths of every format's own `config` members (`config.vct`, …), once each. */
const memberInputNames = (): string[] => [
  ...new Set(allFormatSpecs().flatMap((spec) => spec.configInputs.map(({ member }) => `config.${member}`))),
]

/** The editor's values of a configuration (stored, imported, or none: a new SD-JWT VC one). */
export function configValues(config?: CredentialConfigInput): CredentialConfigValues {
  const meta = config?.config
  return {
    id: config?.id ?? '',
    description: config?.description ?? '',
    config: {
      format: meta?.format ?? 'dc+sd-jwt',
      members: membersOf(meta),
      scope: meta?.scope ?? '',
      display: (meta?.display ?? []).map(({ name, locale, ...extra }) => ({ name, locale, extra })),
    },
    fields: config ? config.fields.map(rowOfField) : [newFieldRow()],
    keyChainId: config?.keyChainId ?? '',
    attributeProviderId: config?.attributeProviderId ?? '',
    webhookEndpointId: config?.webhookEndpointId ?? '',
    lifetimeSeconds: config?.lifetimeSeconds ?? 365 * 86_400,
    keyBinding: config?.keyBinding ?? true,
    statusManagement: config?.statusManagement ?? false,
    batchSize: config?.batchSize ?? 1,
    refreshTokens: config?.refreshTokens ?? false,
    dpop: config?.dpop ?? 'optional',
    walletAttestation: config?.walletAttestation ?? 'optional',
    userAuthentication: {
      enabled: config?.userAuthentication !== undefined,
      loginProviderId: config?.userAuthentication?.loginProviderId ?? '',
      claims: Object.entries(config?.userAuthentication?.claims ?? {}).map(([field, source]) => ({
        field,
        claim: typeof source === 'string' ? source : JSON.stringify(source),
      })),
    },
    keyAttestation: {
      enabled: config?.keyAttestation !== undefined,
      required: config?.keyAttestation?.required ?? false,
      keyStorage: config?.keyAttestation?.keyStorage ?? [],
      userAuthentication: config?.keyAttestation?.userAuthentication ?? [],
    },
  }
}

/**
 * The form inputs an API issue path can name (`fields.2.display.0.locale`): problems land on the
 * deepest one that is a prefix of the path (forms/problems.ts `fieldOf`).
 */
export function configInputNames(values: CredentialConfigValues): string[] {
  const names = [
    'id',
    'description',
    'config',
    'config.format',
    ...memberInputNames(),
    'config.scope',
    'config.display',
    'fields',
    'keyChainId',
    'attributeProviderId',
    'webhookEndpointId',
    'lifetimeSeconds',
    'keyBinding',
    'statusManagement',
    'batchSize',
    'refreshTokens',
    'dpop',
    'walletAttestation',
    'userAuthentication',
    'userAuthentication.loginProviderId',
    'userAuthentication.claims',
    'keyAttestation',
    'keyAttestation.required',
    'keyAttestation.keyStorage',
    'keyAttestation.userAuthentication',
  ]
  values.config.display.forEach((_, i) => {
    names.push(`config.display.${i}.name`, `config.display.${i}.locale`)
  })
  values.fields.forEach((row, i) => {
    const at = `fields.${i}`
    names.push(
      at,
      ...['path', 'type', 'mandatory', 'disclosable', 'namespace', 'defaultValue', 'display'].map(
        (m) => `${at}.${m}`,
      ),
    )
    row.display.forEach((_, j) => {
      names.push(`${at}.display.${j}.name`, `${at}.display.${j}.locale`)
    })
  })
  return names
}
