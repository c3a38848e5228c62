import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, jwtVerify } from 'jose'
import Provider, { type Adapter, type AdapterPayload, type ClientMetadata } from 'oidc-provider'

/**
 * A Keycloak realm as the service meets it, in process, on one HTTP server:
 * - `/realms/{realm}/…`: a real OpenID provider (the `oidc-provider` package) at Keycloak's paths
 *   (`/protocol/openid-connect/token`, `/protocol/openid-connect/certs`), issuing JWT access
 *   tokens with the client credentials grant;
 * - `/admin/realms/{realm}/clients/…`: the part of Keycloak's admin REST API that
 *   @keycloak/keycloak-admin-client calls for clients, secrets and protocol mappers, with
 *   Keycloak's status codes and shapes (201 + Location, 409 on a duplicate clientId, 404 bodies).
 *
 * - `/realms/{realm}/protocol/openid-connect/auth` and a login form of Keycloak's shape
 *   (`username`, `password`, "Sign In") for the realm's users: the authorization code flow of
 *   public clients (standard flow, redirect URIs, web origins for CORS), PKCE S256 required as
 *   Keycloak's `pkce.code.challenge.method` makes it, no consent screen (Keycloak's default).
 *
 * The two halves share one client store, the way Keycloak does: oidc-provider reads its clients
 * from it (an oidc-provider adapter), and a token gets the claims of the client's
 * hardcoded-claim mappers and the audience of its audience mapper, as Keycloak's mappers would
 * put them. The admin API accepts only tokens of this provider whose
 * `resource_access.realm-management.roles` hold `manage-clients`, as Keycloak's does.
 */
export interface KeycloakStandIn {
  /** `http://127.0.0.1:{port}`: base URL of Keycloak (admin API and realms). */
  baseUrl: string
  realm: string
  /** Issuer in tokens: the public one when `publicIssuerOrigin` was given. */
  issuer: string
  /** Issuer as reached on this server. */
  internalIssuer: string
  adminClientId: string
  adminClientSecret: string
  /** The provider's private signing key (tests forge tokens with it). */
  signingKey: JWK
  /** Keycloak client representations by internal id. */
  clients: Map<string, ClientRep>
  /** Admin API calls seen, as `METHOD path` (tests check what the adapter did). */
  adminCalls: string[]
  /** Authorization requests seen at the authorization endpoint, their query parameters. */
  authorizationRequests: URLSearchParams[]
  /** The `grant_type` of every token request the provider granted, in order. */
  grants: string[]
  /**
   * A realm user who signs in at the login form; `claims` go into its access tokens, as Keycloak's
   * user attribute and role mappers would put them (e.g. `{ roles: ['tenant:manage'] }`).
   */
  addUser(user: { username: string; password: string; claims: Record<string, unknown> }): void
  /**
   * A public client with the standard flow (a browser app such as the admin console): its
   * redirect URIs, whose origins are its web origins (CORS), and the audience of its tokens.
   */
  addPublicClient(client: { clientId: string; redirectUris: string[]; audience: string }): void
  /** Client credentials grant at the token endpoint, Basic authentication. */
  token(clientId: string, clientSecret: string, params?: Record<string, string>): Promise<TokenAnswer>
  /** Stops answering (connection refused), and answers again on the same port. */
  stop(): Promise<void>
  restart(): Promise<void>
  close(): Promise<void>
}

export interface TokenAnswer {
  status: number
  body: { access_token?: string; error?: string; [key: string]: unknown }
}

interface MapperRep {
  id: string
  name: string
  protocol: string
  protocolMapper: string
  consentRequired?: boolean
  config: Record<string, string>
}

export interface ClientRep {
  id: string
  clientId: string
  enabled: boolean
  publicClient: boolean
  serviceAccountsEnabled: boolean
  clientAuthenticatorType: string
  secret?: string
  protocolMappers: MapperRep[]
  [field: string]: unknown
}

export interface StandInOptions {
  realm?: string
  /** Keycloak behind a fixed public hostname (KC_HOSTNAME): issuer and published URLs use it. */
  publicIssuerOrigin?: string
  /** Access token lifetime (Keycloak's "Access Token Lifespan"), 300 s by default. */
  accessTokenTtlSeconds?: number
}

const json = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...headers,
  })
  res.end(body === undefined ? undefined : JSON.stringify(body))
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text ? (JSON.parse(text) as Record<string, unknown>) : {}
}

const newSecret = () => randomBytes(24).toString('base64url')

/** Keycloak's hardcoded claim: `a.b` nests (a `\.` would escape a dot, not needed here). */
function setClaim(target: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split('.')
  let node = target
  for (const key of keys.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[keys[keys.length - 1] as string] = value
}

function claimsOf(client: ClientRep | undefined): Record<string, unknown> {
  const claims: Record<string, unknown> = {}
  for (const mapper of client?.protocolMappers ?? []) {
    const c = mapper.config
    if (mapper.protocolMapper !== 'oidc-hardcoded-claim-mapper' || c['access.token.claim'] !== 'true')
      continue
    const raw = c['claim.value'] ?? ''
    setClaim(claims, c['claim.name'] ?? '', c['jsonType.label'] === 'JSON' ? JSON.parse(raw) : raw)
  }
  return claims
}

function audienceOf(client: ClientRep | undefined, fallback: string): string {
  const mapper = client?.protocolMappers.find(
    (m) => m.protocolMapper === 'oidc-audience-mapper' && m.config['access.token.claim'] === 'true',
  )
  return mapper?.config['included.custom.audience'] ?? fallback
}

export async function startKeycloakStandIn(options: StandInOptions = {}): Promise<KeycloakStandIn> {
  const realm = options.realm ?? 'test'
  const clients = new Map<string, ClientRep>()
  const byClientId = (clientId: string) => [...clients.values()].find((c) => c.clientId === clientId)
  const adminCalls: string[] = []

  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => json(res, 503)
  const server: Server = createServer((req, res) => handler(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const baseUrl = `http://127.0.0.1:${port}`
  const realmPath = `/realms/${realm}`
  const internalIssuer = `${baseUrl}${realmPath}`
  const issuer = options.publicIssuerOrigin ? `${options.publicIssuerOrigin}${realmPath}` : internalIssuer

  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const signingKey = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' }
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicKey } = signingKey
  const publicKeys = createLocalJWKSet({ keys: [publicKey] })

  // oidc-provider's storage: clients come from the admin store, everything else stays in memory.
  const memory = new Map<string, AdapterPayload>()
  class StoreAdapter implements Adapter {
    constructor(private readonly model: string) {}
    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model !== 'Client') return memory.get(`${this.model}:${id}`)
      const client = byClientId(id)
      if (client?.enabled && client.publicClient && client.standardFlowEnabled) {
        const metadata: ClientMetadata = {
          client_id: client.clientId,
          // Keycloak's standard flow answers with a refresh token too.
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          redirect_uris: (client.redirectUris as string[] | undefined) ?? [],
          token_endpoint_auth_method: 'none',
        }
        return metadata as AdapterPayload
      }
      if (!client?.enabled || client.publicClient || !client.serviceAccountsEnabled || !client.secret)
        return undefined
      const metadata: ClientMetadata = {
        client_id: client.clientId,
        client_secret: client.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      }
      return metadata as AdapterPayload
    }
    async upsert(id: string, payload: AdapterPayload) {
      memory.set(`${this.model}:${id}`, payload)
    }
    // Sessions by uid: codes are bound to the login session that made them.
    async findByUid(uid: string) {
      for (const [key, payload] of memory)
        if (key.startsWith(`${this.model}:`) && payload.uid === uid) return payload
      return undefined
    }
    async findByUserCode() {
      return undefined
    }
    async consume() {}
    async destroy(id: string) {
      memory.delete(`${this.model}:${id}`)
    }
    async revokeByGrantId() {}
  }

  const defaultAudience = `${issuer}/account`
  const users = new Map<string, { password: string; claims: Record<string, unknown> }>()
  const authorizationRequests: URLSearchParams[] = []
  const grants: string[] = []
  const loginPath = `${realmPath}/login-actions/authenticate/`
  const provider = new Provider(issuer, {
    adapter: StoreAdapter,
    jwks: { keys: [signingKey] },
    routes: {
      authorization: '/protocol/openid-connect/auth',
      token: '/protocol/openid-connect/token',
      jwks: '/protocol/openid-connect/certs',
      end_session: '/protocol/openid-connect/logout',
      userinfo: '/protocol/openid-connect/userinfo',
    },
    interactions: { url: (_ctx, interaction) => `${loginPath}${interaction.uid}` },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // Keycloak asks no consent of a client unless "Consent required" is on: the grant is given.
    loadExistingGrant: async (ctx) => {
      const client = ctx.oidc.client
      const accountId = ctx.oidc.session?.accountId
      if (!client || !accountId) return undefined
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(client.clientId)
      if (grantId) return ctx.oidc.provider.Grant.find(grantId)
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId })
      grant.addOIDCScope('openid')
      grant.addResourceScope(audienceOf(byClientId(client.clientId), defaultAudience), '')
      await grant.save()
      return grant
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, client) => audienceOf(client && byClientId(client.clientId), defaultAudience),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          audience: resource,
          scope: '',
          accessTokenTTL: options.accessTokenTtlSeconds ?? 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const { clientId, accountId } = token as { clientId: string; accountId?: string }
      const user = accountId === undefined ? undefined : users.get(accountId)
      return {
        ...claimsOf(byClientId(clientId)),
        ...(user ? { preferred_username: accountId, ...user.claims } : {}),
      }
    },
  })
  // Keycloak behind a proxy with a fixed hostname publishes the public URLs.
  provider.proxy = true
  provider.on('grant.success', (ctx) => {
    grants.push(String(ctx.oidc.params?.grant_type))
  })
  const oidc = provider.callback()
  const publicOrigin = options.publicIssuerOrigin ? new URL(options.publicIssuerOrigin) : undefined

  const admin = adminApi()
  handler = (req, res) => {
    const url = req.url ?? '/'
    if (url.startsWith(loginPath)) {
      login(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }))
      return
    }
    if (url.startsWith(`${realmPath}/protocol/openid-connect/auth?`))
      authorizationRequests.push(new URL(url, baseUrl).searchParams)
    if (url.startsWith(`/admin${realmPath}/`)) {
      admin(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }))
      return
    }
    if (url === realmPath || url.startsWith(`${realmPath}/`)) {
      if (publicOrigin) {
        req.headers['x-forwarded-host'] = publicOrigin.host
        req.headers['x-forwarded-proto'] = publicOrigin.protocol.replace(':', '')
      }
      ;(req as IncomingMessage & { originalUrl?: string }).originalUrl = url
      req.url = url.slice(realmPath.length) || '/'
      oidc(req, res)
      return
    }
    json(res, 404, { error: 'Unable to find matching target resource method' })
  }

  /** Keycloak's login form (its field names and button), then back to the authorization flow. */
  async function login(req: IncomingMessage, res: ServerResponse) {
    const page = (message?: string) => {
      res.writeHead(message ? 401 : 200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(`<!doctype html><html lang="en"><head><title>Sign in to ${realm}</title></head><body><main>
<h1>Sign in to your account</h1>${message ? `<p role="alert">${message}</p>` : ''}
<form method="post" action="${req.url}"><label for="username">Username or email</label>
<input id="username" name="username" autocomplete="username">
<label for="password">Password</label><input id="password" name="password" type="password">
<button id="kc-login" type="submit">Sign In</button></form></main></body></html>`)
    }
    if (req.method !== 'POST') return page()
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
    const username = form.get('username') ?? ''
    const user = users.get(username)
    if (!user || user.password !== form.get('password')) return page('Invalid username or password.')
    await provider.interactionFinished(req, res, { login: { accountId: username } })
  }

  // The admin client, a realm client like any other, holding manage-clients of realm-management.
  const adminClientId = 'credential-service-admin'
  const adminClientSecret = newSecret()
  const adminRep = representation({
    clientId: adminClientId,
    secret: adminClientSecret,
    serviceAccountsEnabled: true,
    protocolMappers: [
      {
        name: 'realm-management roles',
        protocol: 'openid-connect',
        protocolMapper: 'oidc-hardcoded-claim-mapper',
        config: {
          'claim.name': 'resource_access.realm-management.roles',
          'claim.value': '["manage-clients","view-clients"]',
          'jsonType.label': 'JSON',
          'access.token.claim': 'true',
        },
      },
    ],
  })
  clients.set(adminRep.id, adminRep)

  function representation(input: Record<string, unknown>): ClientRep {
    const confidential = input.publicClient !== true
    const mappers = Array.isArray(input.protocolMappers)
      ? (input.protocolMappers as Omit<MapperRep, 'id'>[])
      : []
    return {
      enabled: true,
      publicClient: false,
      serviceAccountsEnabled: false,
      clientAuthenticatorType: 'client-secret',
      protocol: 'openid-connect',
      ...input,
      id: randomUUID(),
      clientId: input.clientId as string,
      ...(confidential ? { secret: typeof input.secret === 'string' ? input.secret : newSecret() } : {}),
      protocolMappers: mappers.map((m) => ({ consentRequired: false, ...m, id: randomUUID() })),
    }
  }

  function adminApi() {
    const prefix = `/admin${realmPath}/clients`
    return async (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', baseUrl)
      const method = req.method ?? 'GET'
      adminCalls.push(`${method} ${url.pathname}`)
      // Keycloak's admin API: a bearer token of the realm with realm-management/manage-clients.
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
      let roles: unknown
      try {
        const { payload } = await jwtVerify(bearer ?? '', publicKeys, { issuer })
        roles = (payload.resource_access as Record<string, { roles?: unknown }> | undefined)?.[
          'realm-management'
        ]?.roles
      } catch {
        return json(res, 401, { error: 'HTTP 401 Unauthorized' })
      }
      if (!Array.isArray(roles) || !roles.includes('manage-clients'))
        return json(res, 403, { error: 'HTTP 403 Forbidden' })

      if (!url.pathname.startsWith(prefix))
        return json(res, 404, { error: 'Unable to find matching target resource method' })
      const [id, sub, sub2, mapperId] = url.pathname.slice(prefix.length).split('/').filter(Boolean)
      const notFound = () => json(res, 404, { error: 'Could not find client' })

      if (id === undefined) {
        if (method === 'GET') {
          const wanted = url.searchParams.get('clientId')
          const search = url.searchParams.get('search') === 'true'
          const list = [...clients.values()].filter(
            (c) => wanted === null || (search ? c.clientId.includes(wanted) : c.clientId === wanted),
          )
          return json(res, 200, list)
        }
        if (method === 'POST') {
          const body = await readJson(req)
          if (typeof body.clientId !== 'string' || body.clientId === '')
            return json(res, 400, { errorMessage: 'Client id is required' })
          if (byClientId(body.clientId))
            return json(res, 409, { errorMessage: `Client ${body.clientId} already exists` })
          const created = representation(body)
          clients.set(created.id, created)
          return json(res, 201, undefined, { location: `${baseUrl}${prefix}/${created.id}` })
        }
        return json(res, 405, { error: 'HTTP 405 Method Not Allowed' })
      }

      const client = clients.get(id)
      if (!client) return notFound()

      if (sub === undefined) {
        if (method === 'GET') return json(res, 200, client)
        if (method === 'DELETE') {
          clients.delete(id)
          return json(res, 204)
        }
        if (method === 'PUT') {
          // Keycloak's update leaves id and protocol mappers alone (they have their own endpoints).
          const { id: _id, protocolMappers: _mappers, ...fields } = await readJson(req)
          if (
            typeof fields.clientId === 'string' &&
            fields.clientId !== client.clientId &&
            byClientId(fields.clientId)
          )
            return json(res, 409, { errorMessage: `Client ${fields.clientId} already exists` })
          Object.assign(client, fields)
          return json(res, 204)
        }
      }

      if (sub === 'client-secret' && sub2 === undefined) {
        if (method === 'POST') client.secret = newSecret()
        if (method === 'GET' || method === 'POST')
          return json(res, 200, { type: 'secret', value: client.secret })
      }

      if (sub === 'protocol-mappers' && sub2 === 'models') {
        if (mapperId === undefined && method === 'GET') return json(res, 200, client.protocolMappers)
        if (mapperId === undefined && method === 'POST') {
          const body = (await readJson(req)) as Omit<MapperRep, 'id'>
          if (client.protocolMappers.some((m) => m.name === body.name))
            return json(res, 409, { errorMessage: 'Protocol mapper exists with same name' })
          const mapper = { consentRequired: false, ...body, id: randomUUID() }
          client.protocolMappers.push(mapper)
          return json(res, 201, undefined, {
            location: `${baseUrl}${prefix}/${id}/protocol-mappers/models/${mapper.id}`,
          })
        }
        const index = client.protocolMappers.findIndex((m) => m.id === mapperId)
        if (index < 0) return json(res, 404, { error: 'Model not found' })
        if (method === 'PUT') {
          const { id: _id, ...fields } = await readJson(req)
          Object.assign(client.protocolMappers[index] as MapperRep, fields)
          return json(res, 204)
        }
        if (method === 'DELETE') {
          client.protocolMappers.splice(index, 1)
          return json(res, 204)
        }
      }
      return json(res, 405, { error: 'HTTP 405 Method Not Allowed' })
    }
  }

  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })

  return {
    baseUrl,
    realm,
    issuer,
    internalIssuer,
    adminClientId,
    adminClientSecret,
    signingKey,
    clients,
    adminCalls,
    authorizationRequests,
    grants,
    addUser({ username, password, claims }) {
      users.set(username, { password, claims })
    },
    addPublicClient({ clientId, redirectUris, audience }) {
      const client = representation({
        clientId,
        publicClient: true,
        standardFlowEnabled: true,
        redirectUris,
        webOrigins: redirectUris.map((uri) => new URL(uri).origin),
        attributes: { 'pkce.code.challenge.method': 'S256' },
        protocolMappers: [
          {
            name: 'audience',
            protocol: 'openid-connect',
            protocolMapper: 'oidc-audience-mapper',
            config: { 'included.custom.audience': audience, 'access.token.claim': 'true' },
          },
        ],
      })
      clients.set(client.id, client)
    },
    async token(clientId, clientSecret, params = {}) {
      const response = await fetch(`${internalIssuer}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', ...params }).toString(),
      })
      return { status: response.status, body: (await response.json()) as TokenAnswer['body'] }
    },
    stop,
    async restart() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    },
    async close() {
      if (server.listening) await stop()
    },
  }
}
