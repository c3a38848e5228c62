import type { IdentityProviderAdmin } from '@credential-service/core-domain'
import { createClientRepository, type Database } from '@credential-service/db-schema'
import type { ProviderTokenVerifier } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import { keycloakRealm, type ManagementConfig } from '../config'
import { createKeycloakAdmin } from './keycloak-admin'
import { createProviderDiscovery, type ProviderDiscovery, toInternalUrl } from './provider-discovery'
import { createProviderTokenVerifier } from './provider-tokens'

/** What external OIDC mode (spec §5.4) replaces: token verification, token endpoint, client store. */
export interface OidcMode {
  /** OIDC: the public issuer. */
  issuer: string
  discovery: ProviderDiscovery
  verify: ProviderTokenVerifier
  admin: IdentityProviderAdmin
  /** The provider's token endpoint for the Swagger UI; Keycloak's path until discovery answered. */
  tokenUrl: () => string
  /** The token endpoint as this service reaches it (through OIDC_INTERNAL_ISSUER_URL when set). */
  serverTokenUrl: () => Promise<string>
  /** How the console signs in at the provider; undefined without CONSOLE_OIDC_CLIENT_ID. */
  consoleSignIn: (() => Promise<ConsoleOidcSignIn>) | undefined
}

/**
 * What the admin console needs to sign in at the provider as a public client (authorization code
 * + PKCE S256, RFC 7636): nothing secret, served at `/console/config.json`.
 */
export interface ConsoleOidcSignIn {
  mode: 'oidc'
  issuer: string
  clientId: string
  authorizationEndpoint: string
  tokenEndpoint: string
  /** Where the access token names the tenant and the roles (OIDC_TENANT_CLAIM, OIDC_ROLES_CLAIM). */
  tenantClaim: string
  rolesClaim: string
}

/** OIDC mode from the configuration, or undefined when OIDC is unset (built-in token server). */
export function createOidcMode(config: ManagementConfig, now?: () => Date): OidcMode | undefined {
  const issuer = config.OIDC
  if (issuer === undefined) return undefined
  const internalIssuer = config.OIDC_INTERNAL_ISSUER_URL ?? issuer
  // The configuration schema refused an issuer that is not `<base>/realms/<realm>`.
  const realm = keycloakRealm(internalIssuer) as NonNullable<ReturnType<typeof keycloakRealm>>
  const audience = config.OIDC_AUDIENCE ?? `${config.PUBLIC_URL}/api`
  const discovery = createProviderDiscovery({ issuer, internalIssuer })
  let tokenUrl = `${issuer.replace(/\/$/, '')}/protocol/openid-connect/token`
  const remember = () =>
    discovery.endpoints().then(
      (endpoints) => {
        tokenUrl = endpoints.tokenEndpoint
      },
      () => undefined,
    )
  void remember()
  const consoleClientId = config.CONSOLE_OIDC_CLIENT_ID
  // Keycloak's paths while discovery does not answer, as for the token endpoint.
  const keycloakEndpoint = (name: string) => `${issuer.replace(/\/$/, '')}/protocol/openid-connect/${name}`
  return {
    issuer,
    discovery,
    verify: createProviderTokenVerifier({
      discovery,
      issuer,
      audience,
      tenantClaim: config.OIDC_TENANT_CLAIM,
      rolesClaim: config.OIDC_ROLES_CLAIM,
      ...(now ? { now } : {}),
    }),
    admin: createKeycloakAdmin({
      baseUrl: realm.baseUrl,
      realm: realm.realm,
      clientId: config.OIDC_CLIENT_ID as string,
      clientSecret: config.OIDC_CLIENT_SECRET as string,
      tenantClaim: config.OIDC_TENANT_CLAIM,
      rolesClaim: config.OIDC_ROLES_CLAIM,
      audience,
    }),
    tokenUrl: () => tokenUrl,
    serverTokenUrl: async () => {
      const endpoints = await discovery.endpoints().catch(() => undefined)
      return toInternalUrl(endpoints?.tokenEndpoint ?? keycloakEndpoint('token'), issuer, internalIssuer)
    },
    consoleSignIn:
      consoleClientId === undefined
        ? undefined
        : async () => {
            const endpoints = await discovery.endpoints().catch(() => undefined)
            return {
              mode: 'oidc',
              issuer,
              clientId: consoleClientId,
              authorizationEndpoint: endpoints?.authorizationEndpoint ?? keycloakEndpoint('auth'),
              tokenEndpoint: endpoints?.tokenEndpoint ?? keycloakEndpoint('token'),
              tenantClaim: config.OIDC_TENANT_CLAIM,
              rolesClaim: config.OIDC_ROLES_CLAIM,
            }
          },
  }
}

/**
 * Spec §5.4: with AUTH_CLIENT_ID and AUTH_CLIENT_SECRET, the root client is created or updated in
 * the provider at start, with the roles of its record (bootstrap.ts wrote it: `tenant:manage`, no
 * tenant).
 */
export async function pushRootClient(
  db: Database,
  config: ManagementConfig,
  admin: IdentityProviderAdmin,
): Promise<'created' | 'updated' | 'skipped'> {
  const clientId = config.AUTH_CLIENT_ID
  const secret = config.AUTH_CLIENT_SECRET
  if (!clientId || !secret) return 'skipped'
  const record = await createClientRepository(db, null).get(clientId)
  return admin.upsertClient(
    { clientId, tenantId: undefined, roles: record?.roles ?? ['tenant:manage'] },
    secret,
  )
}

const RETRY_SECONDS = 10

/**
 * Pushes the root client when the app is ready. A provider that cannot be reached does not
 * stop the start: the failure is logged and the push tried again every 10 s until it succeeds,
 * while requests that need the provider answer 503.
 */
export function pushRootClientWhenReady(app: FastifyInstance, sync: () => Promise<string>): void {
  let timer: NodeJS.Timeout | undefined
  let closed = false
  const attempt = async () => {
    try {
      const outcome = await sync()
      app.log.info({ outcome }, 'root client pushed to the identity provider')
    } catch (error) {
      app.log.error(
        { err: error },
        `root client could not be pushed to the identity provider; retrying in ${RETRY_SECONDS} s`,
      )
      if (!closed) {
        timer = setTimeout(attempt, RETRY_SECONDS * 1000)
        timer.unref()
      }
    }
  }
  app.addHook('onReady', attempt)
  app.addHook('onClose', async () => {
    closed = true
    clearTimeout(timer)
  })
}
