import type {
  ClaimField,
  DcApiSettings,
  DcqlQuery,
  KeyAttestationPolicy,
  LoginClaimSource,
} from '@credential-service/core-domain'
import { sql } from 'drizzle-orm'
import {
  boolean,
  check,
  foreignKey,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { keyChains } from './key-chains'
import { tenants } from './tenants'

const owned = () => ({
  tenantId: text()
    .notNull()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  id: text().notNull(),
  description: text(),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
})

const endpoint = () => ({
  ...owned(),
  url: text().notNull(),
  authType: text().notNull(),
  authHeader: text(),
  /** Encrypted (MASTER_SECRET): the API key value or the HMAC signing secret. */
  authSecret: text(),
})

export const attributeProviders = pgTable(
  'attribute_providers',
  { ...endpoint(), timeoutMs: integer().notNull().default(5000) },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
)
export type AttributeProviderRow = typeof attributeProviders.$inferSelect

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    ...endpoint(),
    events: text().array(),
    /** HMAC endpoints: `x-signature`, `standard-webhooks` or `both` (the headers deliveries carry). */
    signatureHeaders: text().notNull().default('x-signature'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    check(
      'webhook_endpoints_signature_headers',
      sql`${t.signatureHeaders} in ('x-signature', 'standard-webhooks', 'both')`,
    ),
  ],
)
export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect

/**
 * Credential configurations, version 2 only: no `claims`, `disclosure_frame` or `schema` columns
 * (spec §9.2). References are composite foreign keys within the tenant, so a referenced key chain,
 * provider or endpoint cannot be deleted and another tenant's cannot be named.
 */
/**
 * Login providers (kind `openid`: upstream OpenID providers; kind `presentation`: a presentation
 * configuration the holder answers). Upstream OpenID providers that authenticate holders in the authorization code flow. The client
 * secret is encrypted (key runtime cipher) and never returned.
 */
export const loginProviders = pgTable(
  'login_providers',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    description: text(),
    /** `openid`: an upstream OpenID provider; `presentation`: a presentation of another credential. */
    kind: text().notNull().default('openid'),
    issuer: text(),
    clientId: text(),
    clientSecretEncrypted: text(),
    scopes: text().array().notNull(),
    /** Kind `presentation`: the presentation configuration the holder answers. */
    presentationConfigId: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    foreignKey({
      name: 'login_providers_presentation_config_fk',
      columns: [t.tenantId, t.presentationConfigId],
      foreignColumns: [presentationConfigs.tenantId, presentationConfigs.id],
    }).onDelete('no action'),
    check(
      'login_providers_kind_check',
      sql`(${t.kind} = 'openid' and ${t.issuer} is not null and ${t.clientId} is not null and ${t.presentationConfigId} is null) or (${t.kind} = 'presentation' and ${t.presentationConfigId} is not null)`,
    ),
  ],
)
export type LoginProviderRow = typeof loginProviders.$inferSelect

/**
 * External OAuth authorization servers whose access tokens the tenant's credential endpoint
 * accepts (OpenID4VCI 1.0 §12.2.4 `authorization_servers`). The introspection client secret is
 * encrypted (key runtime cipher) and never returned.
 */
export const authServers = pgTable(
  'auth_servers',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    description: text(),
    issuer: text().notNull(),
    /** `jwt` (RFC 9068 against the JWKS) or `introspection` (RFC 7662). */
    tokenCheck: text().notNull(),
    clientId: text(),
    clientSecretEncrypted: text(),
    credentialConfigurationIds: text().array().notNull(),
    /** `authorization_details` and/or `scope`. */
    mapping: text().array().notNull(),
    /** `token` or `attribute-provider`. */
    claimsSource: text().notNull(),
    singleUseTokens: boolean().notNull().default(false),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    uniqueIndex('auth_servers_issuer').on(t.tenantId, t.issuer),
    check(
      'auth_servers_token_check',
      sql`(${t.tokenCheck} = 'jwt') or (${t.tokenCheck} = 'introspection' and ${t.clientId} is not null)`,
    ),
    check('auth_servers_claims_source_check', sql`${t.claimsSource} in ('token', 'attribute-provider')`),
  ],
)
export type AuthServerRow = typeof authServers.$inferSelect

export const credentialConfigs = pgTable(
  'credential_configs',
  {
    ...owned(),
    format: text().notNull(),
    docType: text(),
    vct: text(),
    /**
     * The format's own `config` members besides `format`, `scope` and `display` (its type member
     * among them), so that a new format needs no column; `docType` and `vct` stay for the rows and
     * queries that read them.
     */
    formatConfig: jsonb().$type<Record<string, unknown>>(),
    scope: text().notNull(),
    display: jsonb().$type<Record<string, unknown>[]>(),
    fields: jsonb().$type<ClaimField[]>().notNull(),
    keyChainId: text().notNull(),
    attributeProviderId: text(),
    webhookEndpointId: text(),
    lifetimeSeconds: integer().notNull(),
    keyBinding: boolean().notNull(),
    statusManagement: boolean().notNull(),
    batchSize: integer().notNull(),
    /** Authorization code flow: who logs the holder in (null: no holder login) ... */
    loginProviderId: text(),
    /** ... and what fills which field (field path joined by '.'): a claim name, or a claims path of a presentation. */
    loginClaims: jsonb().$type<Record<string, LoginClaimSource>>(),
    refreshTokens: boolean().notNull().default(false),
    dpop: text().notNull().default('optional'),
    walletAttestation: text().notNull().default('optional'),
    keyAttestation: jsonb().$type<KeyAttestationPolicy>(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    foreignKey({
      name: 'credential_configs_key_chain_fk',
      columns: [t.tenantId, t.keyChainId],
      foreignColumns: [keyChains.tenantId, keyChains.id],
    }).onDelete('no action'),
    foreignKey({
      name: 'credential_configs_attribute_provider_fk',
      columns: [t.tenantId, t.attributeProviderId],
      foreignColumns: [attributeProviders.tenantId, attributeProviders.id],
    }).onDelete('no action'),
    foreignKey({
      name: 'credential_configs_webhook_endpoint_fk',
      columns: [t.tenantId, t.webhookEndpointId],
      foreignColumns: [webhookEndpoints.tenantId, webhookEndpoints.id],
    }).onDelete('no action'),
    foreignKey({
      name: 'credential_configs_login_provider_fk',
      columns: [t.tenantId, t.loginProviderId],
      foreignColumns: [loginProviders.tenantId, loginProviders.id],
    }).onDelete('no action'),
  ],
)
export type CredentialConfigRow = typeof credentialConfigs.$inferSelect

export const presentationConfigs = pgTable(
  'presentation_configs',
  {
    ...owned(),
    dcqlQuery: jsonb().$type<DcqlQuery>().notNull(),
    lifetimeSeconds: integer().notNull(),
    responseMode: text().notNull(),
    transactionDataTypes: text().array(),
    webhookEndpointId: text(),
    redirectUri: text(),
    keyChainId: text().notNull(),
    clientIdPrefix: text().notNull().default('x509_san_dns'),
    /** OpenID4VP 1.0 §12: the Verifier Attestation JWT for clientIdPrefix verifier_attestation. */
    verifierAttestation: text(),
    /** Digital Credentials API settings (protocols in order, allowed origins). */
    dcApi: jsonb().$type<DcApiSettings>(),
    /** Deprecated (issue 25): emptied by migration 0026 and at every save; dropped in a later version. */
    trustAnchors: text().array(),
    /** `from-anchors`: requests name the trust anchors as DCQL `trusted_authorities` (OpenID4VP 1.0 §6.1.1). */
    trustedAuthorities: text(),
    /** Trust list ids; checked at save and at a list's delete under row locks (no array FKs). */
    trustListIds: text().array(),
    acceptAnyIssuer: boolean().notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    foreignKey({
      name: 'presentation_configs_key_chain_fk',
      columns: [t.tenantId, t.keyChainId],
      foreignColumns: [keyChains.tenantId, keyChains.id],
    }).onDelete('no action'),
    foreignKey({
      name: 'presentation_configs_webhook_endpoint_fk',
      columns: [t.tenantId, t.webhookEndpointId],
      foreignColumns: [webhookEndpoints.tenantId, webhookEndpoints.id],
    }).onDelete('no action'),
  ],
)
export type PresentationConfigRow = typeof presentationConfigs.$inferSelect
