import type {
  AttributeProvider,
  AuthServer,
  CredentialConfig,
  CredentialConfigData,
  EndpointAuth,
  LoginProvider,
  PageQuery,
  PresentationConfig,
  PresentationConfigData,
  WalletProvider,
  WebhookEndpoint,
} from '@credential-service/core-domain'
import { and, asc, eq, getTableName, gt, type SQL } from 'drizzle-orm'
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core'
import type { Database, Executor } from '../database'
import {
  type AttributeProviderRow,
  type AuthServerRow,
  attributeProviders,
  authServers,
  type CredentialConfigRow,
  credentialConfigs,
  type LoginProviderRow,
  loginProviders,
  type PresentationConfigRow,
  presentationConfigs,
  type WalletProviderRow,
  type WebhookEndpointRow,
  walletProviders,
  webhookEndpoints,
} from '../schema'
import { decodeCursor, toPage } from './pagination'

type OwnedTable = PgTable & { tenantId: PgColumn; id: PgColumn }

/**
 * List/get/upsert/delete of one tenant-owned configuration table; every statement filters on the
 * tenant, so another tenant's row reads as not found.
 */
export function owned<Row extends { id: string }, T>(
  db: Database,
  table: OwnedTable,
  tenantId: string,
  map: (row: Row) => T,
) {
  const byId = (id: string): SQL => and(eq(table.tenantId, tenantId), eq(table.id, id)) as SQL
  return {
    async list(query: PageQuery) {
      const after = decodeCursor(query.cursor, getTableName(table))
      const rows = (await db
        .select()
        .from(table as PgTable)
        .where(and(eq(table.tenantId, tenantId), after === undefined ? undefined : gt(table.id, after)))
        .orderBy(asc(table.id))
        .limit(query.limit + 1)) as unknown as Row[]
      return toPage(getTableName(table), rows, query.limit, (r) => r.id, map)
    },
    async row(id: string, tx: Executor = db): Promise<Row | undefined> {
      const [row] = (await tx
        .select()
        .from(table as PgTable)
        .where(byId(id))) as unknown as Row[]
      return row
    },
    async get(id: string, tx: Executor = db): Promise<T | undefined> {
      const row = await this.row(id, tx)
      return row && map(row)
    },
    /** The tenant's rows as stored (secrets sealed), by id. */
    async rows(tx: Executor = db): Promise<Row[]> {
      return (await tx
        .select()
        .from(table as PgTable)
        .where(eq(table.tenantId, tenantId))
        .orderBy(asc(table.id))) as unknown as Row[]
    },
    async all(tx: Executor = db): Promise<T[]> {
      return (await this.rows(tx)).map(map)
    },
    /** Insert or replace by id; `createdAt` survives a replace. */
    async upsert(values: Record<string, unknown>, tx: Executor = db): Promise<T> {
      const row = { ...values, tenantId, updatedAt: new Date() }
      const [saved] = (await tx
        .insert(table)
        .values(row as never)
        .onConflictDoUpdate({ target: [table.tenantId, table.id], set: row as never })
        .returning()) as unknown as Row[]
      return map(saved as Row)
    },
    async delete(id: string, tx: Executor = db): Promise<boolean> {
      const rows = await tx.delete(table).where(byId(id)).returning({ id: table.id })
      return rows.length > 0
    },
  }
}

const iso = (date: Date) => date.toISOString()
const optional = <K extends string, V>(key: K, value: V | null) =>
  value === null ? {} : ({ [key]: value } as Record<K, V>)

export function toCredentialConfig(row: CredentialConfigRow): CredentialConfig {
  return {
    id: row.id,
    ...optional('description', row.description),
    // Rows are written from checked configurations only: the format's own type column is set.
    config: {
      format: row.format,
      ...optional('docType', row.docType),
      ...optional('vct', row.vct),
      ...row.formatConfig,
      scope: row.scope,
      ...optional('display', row.display as CredentialConfig['config']['display'] | null),
    } as CredentialConfig['config'],
    fields: row.fields,
    keyChainId: row.keyChainId,
    ...optional('attributeProviderId', row.attributeProviderId),
    ...optional('webhookEndpointId', row.webhookEndpointId),
    lifetimeSeconds: row.lifetimeSeconds,
    keyBinding: row.keyBinding,
    statusManagement: row.statusManagement,
    batchSize: row.batchSize,
    ...(row.loginProviderId
      ? {
          userAuthentication: {
            loginProviderId: row.loginProviderId,
            ...optional('claims', row.loginClaims),
          },
        }
      : {}),
    refreshTokens: row.refreshTokens,
    dpop: row.dpop as CredentialConfig['dpop'],
    walletAttestation: row.walletAttestation as CredentialConfig['walletAttestation'],
    ...optional('keyAttestation', row.keyAttestation),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

/** A configuration's `config` without what every format has (its own columns): the format's members. */
function formatMembers(config: CredentialConfigData['config']): Record<string, unknown> {
  const { format: _format, scope: _scope, display: _display, ...members } = config
  return members
}

export function credentialConfigColumns(config: CredentialConfigData) {
  return {
    id: config.id,
    description: config.description ?? null,
    format: config.config.format,
    // One column per format's type member; the others stay null.
    docType: 'docType' in config.config ? config.config.docType : null,
    vct: 'vct' in config.config ? config.config.vct : null,
    formatConfig: formatMembers(config.config),
    scope: config.config.scope ?? config.id,
    display: config.config.display ?? null,
    fields: config.fields,
    keyChainId: config.keyChainId,
    attributeProviderId: config.attributeProviderId ?? null,
    webhookEndpointId: config.webhookEndpointId ?? null,
    lifetimeSeconds: config.lifetimeSeconds,
    keyBinding: config.keyBinding,
    statusManagement: config.statusManagement,
    batchSize: config.batchSize,
    loginProviderId: config.userAuthentication?.loginProviderId ?? null,
    loginClaims: config.userAuthentication?.claims ?? null,
    refreshTokens: config.refreshTokens,
    dpop: config.dpop,
    walletAttestation: config.walletAttestation,
    keyAttestation: config.keyAttestation ?? null,
  }
}

export function toPresentationConfig(row: PresentationConfigRow): PresentationConfig {
  return {
    id: row.id,
    ...optional('description', row.description),
    dcqlQuery: row.dcqlQuery,
    lifetimeSeconds: row.lifetimeSeconds,
    responseMode: row.responseMode as PresentationConfig['responseMode'],
    ...optional('transactionDataTypes', row.transactionDataTypes),
    ...optional('webhookEndpointId', row.webhookEndpointId),
    ...optional('redirectUri', row.redirectUri),
    keyChainId: row.keyChainId,
    clientIdPrefix: row.clientIdPrefix as PresentationConfig['clientIdPrefix'],
    ...optional('verifierAttestation', row.verifierAttestation),
    ...optional('dcApi', row.dcApi),
    ...optional('trustedAuthorities', row.trustedAuthorities as PresentationConfig['trustedAuthorities']),
    ...optional('trustListIds', row.trustListIds),
    acceptAnyIssuer: row.acceptAnyIssuer,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export function presentationConfigColumns(config: PresentationConfigData) {
  return {
    id: config.id,
    description: config.description ?? null,
    dcqlQuery: config.dcqlQuery,
    lifetimeSeconds: config.lifetimeSeconds,
    responseMode: config.responseMode,
    transactionDataTypes: config.transactionDataTypes ?? null,
    webhookEndpointId: config.webhookEndpointId ?? null,
    redirectUri: config.redirectUri ?? null,
    keyChainId: config.keyChainId,
    clientIdPrefix: config.clientIdPrefix,
    verifierAttestation: config.verifierAttestation ?? null,
    dcApi: config.dcApi ?? null,
    // Issue 25: anchors live in trust lists; a save clears what an old process may have written.
    trustAnchors: null,
    trustedAuthorities: config.trustedAuthorities ?? null,
    trustListIds: config.trustListIds?.length ? config.trustListIds : null,
    acceptAnyIssuer: config.acceptAnyIssuer,
  }
}

function authOf(row: { authType: string; authHeader: string | null }): EndpointAuth {
  if (row.authType === 'api-key') return { type: 'api-key', headerName: row.authHeader ?? 'x-api-key' }
  return { type: row.authType as 'none' | 'hmac' }
}

export function toAttributeProvider(row: AttributeProviderRow): AttributeProvider {
  return {
    id: row.id,
    description: row.description,
    url: row.url,
    auth: authOf(row),
    timeoutMs: row.timeoutMs,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export function toLoginProvider(row: LoginProviderRow): LoginProvider {
  return {
    id: row.id,
    description: row.description,
    kind: row.kind === 'presentation' ? 'presentation' : 'openid',
    issuer: row.issuer,
    clientId: row.clientId,
    presentationConfigId: row.presentationConfigId,
    scopes: row.scopes,
    hasClientSecret: row.clientSecretEncrypted !== null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export function toWebhookEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    description: row.description,
    url: row.url,
    auth: authOf(row),
    events: row.events,
    signatureHeaders: row.signatureHeaders as WebhookEndpoint['signatureHeaders'],
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export const createCredentialConfigRepository = (db: Database, tenantId: string) =>
  owned<CredentialConfigRow, CredentialConfig>(
    db,
    credentialConfigs as unknown as OwnedTable,
    tenantId,
    toCredentialConfig,
  )
export const createPresentationConfigRepository = (db: Database, tenantId: string) =>
  owned<PresentationConfigRow, PresentationConfig>(
    db,
    presentationConfigs as unknown as OwnedTable,
    tenantId,
    toPresentationConfig,
  )
export const createAttributeProviderRepository = (db: Database, tenantId: string) =>
  owned<AttributeProviderRow, AttributeProvider>(
    db,
    attributeProviders as unknown as OwnedTable,
    tenantId,
    toAttributeProvider,
  )
export const createWebhookEndpointRepository = (db: Database, tenantId: string) =>
  owned<WebhookEndpointRow, WebhookEndpoint>(
    db,
    webhookEndpoints as unknown as OwnedTable,
    tenantId,
    toWebhookEndpoint,
  )
export const createLoginProviderRepository = (db: Database, tenantId: string) =>
  owned<LoginProviderRow, LoginProvider>(
    db,
    loginProviders as unknown as OwnedTable,
    tenantId,
    toLoginProvider,
  )

export function toAuthServer(row: AuthServerRow): AuthServer {
  return {
    id: row.id,
    description: row.description,
    issuer: row.issuer,
    tokenCheck: row.tokenCheck === 'introspection' ? 'introspection' : 'jwt',
    clientId: row.clientId,
    credentialConfigurationIds: row.credentialConfigurationIds,
    mapping: row.mapping as AuthServer['mapping'],
    claimsSource: row.claimsSource === 'attribute-provider' ? 'attribute-provider' : 'token',
    singleUseTokens: row.singleUseTokens,
    hasClientSecret: row.clientSecretEncrypted !== null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export const createAuthServerRepository = (db: Database, tenantId: string) =>
  owned<AuthServerRow, AuthServer>(db, authServers as unknown as OwnedTable, tenantId, toAuthServer)

export function toWalletProvider(row: WalletProviderRow): WalletProvider {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ...optional('trustListIds', row.trustListIds),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  }
}

export const createWalletProviderRepository = (db: Database, tenantId: string) =>
  owned<WalletProviderRow, WalletProvider>(
    db,
    walletProviders as unknown as OwnedTable,
    tenantId,
    toWalletProvider,
  )
export type OwnedRepository<T> = ReturnType<typeof owned<{ id: string }, T>>
