import {
  type AttributeProviderData,
  type AuthServerData,
  type ClientCreate,
  type CredentialConfigBody,
  checkClientTenantBinding,
  checkCredentialConfig,
  checkDcqlQuery,
  checkOutboundUrl,
  checkRedirectUri,
  findRemovedCredentialFields,
  findRemovedKeyChainFields,
  formatMemberIssues,
  type KeyChainCreate,
  type LoginProviderData,
  type OutboundUrlPolicy,
  type PresentationConfigData,
  type TenantUpdate,
  type TrustListData,
  type ValidationIssue,
  type WalletProviderData,
  type WebhookEndpointData,
  zAttributeProviderInput,
  zAuthServerInput,
  zClientCreate,
  zCredentialConfigInput,
  zFederationMembershipInput,
  zKeyChainCreate,
  zLoginProviderInput,
  zPresentationConfigInput,
  zTenantId,
  zTenantUpdate,
  zTrustListInput,
  zWalletProviderInput,
  zWebhookEndpointInput,
} from '@credential-service/core-domain'
import type { z } from 'zod'
import { pemIssues } from '../services/anchor-lists'
import { walletProviderIssues } from '../services/config-service'
import { type FederationMembershipData, membershipIssues } from '../services/federation-service'
import { trustListIssues } from '../services/trust-list-service'
import { keyChainFileIssues } from './key-chain-files'
import type { ConfigFile, ImportIssue, TenantFolder } from './read-config-dir'

/** A parsed resource and the file it came from (for the report). */
export interface Planned<T> {
  file: string
  data: T
}

export interface TenantPlan {
  tenant: string
  /** `tenant.json`: the settings of PATCH /api/tenants/{id}; absent keys leave the tenant as it is. */
  settings: TenantUpdate | undefined
  keyChains: Planned<KeyChainCreate & { id: string }>[]
  attributeProviders: Planned<AttributeProviderData>[]
  loginProviders: Planned<LoginProviderData>[]
  webhookEndpoints: Planned<WebhookEndpointData>[]
  trustLists: Planned<TrustListData>[]
  walletProviders: Planned<WalletProviderData>[]
  credentials: Planned<CredentialConfigBody>[]
  presentations: Planned<PresentationConfigData>[]
  authServers: Planned<AuthServerData>[]
  clients: Planned<ClientCreate & { clientId: string; clientSecret: string }>[]
  /** `federation/membership.json`: the body of PUT /api/federation. */
  federation: Planned<FederationMembershipData> | undefined
}

/** The one file `federation/` holds: the tenant has one membership. */
export const FEDERATION_FILE = 'membership'

/** A client file must name its id and secret: the service cannot show a generated one to anybody. */
const zImportedClient = zClientCreate.required({ clientId: true, clientSecret: true })

function parse<T extends z.ZodType>(
  schema: T,
  file: ConfigFile,
  issues: ImportIssue[],
): z.output<T> | undefined {
  // The file name gives the id when the body has none.
  const idKey = schema === (zImportedClient as z.ZodType) ? 'clientId' : 'id'
  const body = { [idKey]: file.name, ...file.json }
  if (body[idKey] !== file.name) {
    issues.push({
      file: file.file,
      path: idKey,
      message: `'${String(body[idKey])}' differs from the file name '${file.name}'`,
    })
  }
  return parseBody(schema, body, file.file, issues)
}

/** `body` parsed by `schema`; each failure an issue of `file` (an unknown key named as such). */
function parseBody<T extends z.ZodType>(
  schema: T,
  body: unknown,
  file: string,
  issues: ImportIssue[],
): z.output<T> | undefined {
  const result = schema.safeParse(body)
  if (result.success) return result.data
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        issues.push({ file, path: [...issue.path, key].join('.'), message: `unknown field '${key}'` })
    } else {
      issues.push({ file, path: issue.path.join('.'), message: issue.message })
    }
  }
  return undefined
}

const located = (file: string, list: ValidationIssue[]): ImportIssue[] =>
  list.map((issue) => ({ file, path: issue.path.replace(/^(body)?\.?/, ''), message: issue.message }))

/**
 * Checks every file of a tenant folder without touching the database: shapes, removed 4.x/3.x
 * fields (named with their replacement), configuration and DCQL rules, URL policy (endpoint URLs,
 * redirect URIs, trust list URLs), trust list and wallet provider certificates, and references to ids that the folder itself defines (references to existing
 * rows are checked on apply).
 */
export function validateTenantFolder(
  folder: TenantFolder,
  outbound: OutboundUrlPolicy,
): { plan: TenantPlan; issues: ImportIssue[] } {
  const issues: ImportIssue[] = []
  if (!zTenantId.safeParse(folder.tenant).success) {
    issues.push({
      file: folder.tenant,
      path: '',
      message: 'a tenant folder name is a tenant id: lowercase letters, digits, "-" and "_"',
    })
  }
  const plan: TenantPlan = {
    tenant: folder.tenant,
    settings: folder.settings && parseBody(zTenantUpdate, folder.settings.json, folder.settings.file, issues),
    keyChains: [],
    attributeProviders: [],
    loginProviders: [],
    webhookEndpoints: [],
    trustLists: [],
    walletProviders: [],
    credentials: [],
    presentations: [],
    authServers: [],
    clients: [],
    federation: undefined,
  }

  for (const file of folder.files['key-chains']) {
    const removed = findRemovedKeyChainFields(file.json, '')
    const lacking = removed.length ? removed : keyChainFileIssues(file.json)
    if (lacking.length) issues.push(...located(file.file, lacking))
    else {
      const parsed = parse(zKeyChainCreate, file, issues)
      if (parsed) plan.keyChains.push({ file: file.file, data: { ...parsed, id: parsed.id ?? file.name } })
    }
  }
  for (const [kind, schema, target] of [
    ['attribute-providers', zAttributeProviderInput, plan.attributeProviders],
    ['webhook-endpoints', zWebhookEndpointInput, plan.webhookEndpoints],
  ] as const) {
    for (const file of folder.files[kind]) {
      const parsed = parse(schema, file, issues)
      if (!parsed) continue
      const urlIssues = checkOutboundUrl(parsed.url, outbound, 'url')
      issues.push(...urlIssues.map((issue) => ({ file: file.file, ...issue })))
      if (!urlIssues.length) (target as Planned<unknown>[]).push({ file: file.file, data: parsed })
    }
  }
  for (const file of folder.files['login-providers']) {
    const parsed = parse(zLoginProviderInput, file, issues)
    if (!parsed) continue
    const urlIssues = parsed.issuer ? checkOutboundUrl(parsed.issuer, outbound, 'issuer') : []
    issues.push(...urlIssues.map((issue) => ({ file: file.file, ...issue })))
    if (!urlIssues.length) plan.loginProviders.push({ file: file.file, data: parsed })
  }
  for (const file of folder.files['auth-servers']) {
    const parsed = parse(zAuthServerInput, file, issues)
    if (!parsed) continue
    const urlIssues = checkOutboundUrl(parsed.issuer, outbound, 'issuer')
    issues.push(...urlIssues.map((issue) => ({ file: file.file, ...issue })))
    if (!urlIssues.length) plan.authServers.push({ file: file.file, data: parsed })
  }
  for (const file of folder.files['trust-lists']) {
    const parsed = parse(zTrustListInput, file, issues)
    if (!parsed) continue
    const listIssues = located(file.file, trustListIssues(parsed, { outbound }))
    issues.push(...listIssues)
    if (!listIssues.length) plan.trustLists.push({ file: file.file, data: parsed })
  }
  for (const file of folder.files['wallet-providers']) {
    const parsed = parse(zWalletProviderInput, file, issues)
    if (!parsed) continue
    const anchorIssues = located(file.file, walletProviderIssues(parsed))
    issues.push(...anchorIssues)
    if (!anchorIssues.length) plan.walletProviders.push({ file: file.file, data: parsed })
  }
  for (const file of folder.files.credentials) {
    // Version 1 files are refused whole, each removed field named (spec §7, §9.2).
    const removed = findRemovedCredentialFields(file.json, '')
    if (removed.length) {
      issues.push(...located(file.file, removed))
      continue
    }
    // The format's type member, named by its rule as the API does (before the union's parse).
    const members = formatMemberIssues(file.json, '')
    if (members.length) {
      issues.push(...located(file.file, members))
      continue
    }
    const parsed = parse(zCredentialConfigInput, file, issues)
    if (!parsed) continue
    const ruleIssues = located(file.file, checkCredentialConfig(parsed))
    issues.push(...ruleIssues)
    if (!ruleIssues.length) plan.credentials.push({ file: file.file, data: parsed })
  }
  for (const file of folder.files.presentations) {
    const parsed = parse(zPresentationConfigInput, file, issues)
    if (!parsed) continue
    const ruleIssues = located(file.file, [
      ...checkDcqlQuery(parsed.dcqlQuery, 'dcqlQuery'),
      ...pemIssues(parsed.trustAnchors ?? [], 'trustAnchors'),
      ...(parsed.redirectUri === undefined
        ? []
        : checkRedirectUri(parsed.redirectUri, outbound, 'redirectUri')),
    ])
    issues.push(...ruleIssues)
    if (!ruleIssues.length) plan.presentations.push({ file: file.file, data: parsed })
  }
  for (const file of folder.files.federation) {
    if (file.name !== FEDERATION_FILE) {
      issues.push({
        file: file.file,
        path: '',
        message: `federation/ holds ${FEDERATION_FILE}.json only (the body of PUT /api/federation)`,
      })
      continue
    }
    const parsed = parseBody(zFederationMembershipInput, file.json, file.file, issues)
    if (!parsed) continue
    // What the statements and marks say; their subjects and the key chain are checked on apply.
    const ruleIssues = located(file.file, membershipIssues(parsed, undefined))
    issues.push(...ruleIssues)
    if (!ruleIssues.length) plan.federation = { file: file.file, data: parsed }
  }
  for (const file of folder.files.clients) {
    const parsed = parse(zImportedClient, file, issues)
    if (!parsed) continue
    const binding = checkClientTenantBinding(parsed.roles, folder.tenant)
    if (binding) issues.push({ file: file.file, path: 'roles', message: binding })
    else plan.clients.push({ file: file.file, data: parsed })
  }
  return { plan, issues }
}
