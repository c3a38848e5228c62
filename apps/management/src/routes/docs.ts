import { ROLE_DESCRIPTIONS } from '@credential-service/core-domain'
import { openApiTransform, openApiTransformObject, SERVICE_VERSION } from '@credential-service/server-kit'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { TAGS } from './docs-tags'
import { WEBHOOKS } from './docs-webhooks'

export interface DocsOptions {
  /**
   * Token endpoint of the Authorize button: undefined for the built-in `/api/oauth2/token`
   * (spec §5.3), else the identity provider's, asked on each request (OIDC mode, spec §5.4).
   */
  providerTokenUrl?: (() => string) | undefined
}

interface OpenApiDocument {
  components?: { securitySchemes?: { oauth2?: { flows?: { clientCredentials?: { tokenUrl: string } } } } }
}

const API_DESCRIPTION = [
  'Manages tenants, API clients, configurations and sessions. Errors are RFC 9457 `application/problem+json`; the token endpoint answers RFC 6749 errors. A change to a tenant, client, key chain or configuration reaches the issuer and verifier processes when it commits (PostgreSQL NOTIFY); a cached copy is never older than 5 seconds.',
  "Wallets talk to the protocol endpoints, which are not part of this API. Each tenant's credential issuer is `/issuers/{tenantId}` (OpenID4VCI 1.0), with `offers/{id}`, `par`, `authorize`, `authorize/callback` (the redirect URI to register at login providers), `token`, `challenge` (wallet attestation challenges), `nonce`, `credential`, `deferred-credential`, `notification`, `jwks`, `crl/{keyChainId}` and `status-lists/{id}`; its metadata is at `/.well-known/openid-credential-issuer/issuers/{tenantId}`, `/.well-known/oauth-authorization-server/issuers/{tenantId}` and `/.well-known/jwt-vc-issuer/issuers/{tenantId}`. Each tenant's verifier is `/verifiers/{tenantId}` (OpenID4VP 1.0: `requests/{id}` and `responses/{id}`; `dc-api/{id}` takes a page's answer from the Digital Credentials API as JSON `{protocol, data}`, from any origin).",
  "What they do for a configuration is set here: `userAuthentication` and `refreshTokens` (authorization code flow), `dpop`, `walletAttestation` and `keyAttestation` (HAIP sender constraints and attestations), `statusManagement` (revocation), a tenant's `credentialEncryption`, and the login-providers and wallet-providers collections.",
].join('\n\n')

/**
 * OpenAPI description at `/api/docs-json` and Swagger UI at `/api/docs`. The UI's Authorize
 * button runs the client credentials flow against the token endpoint of the mode.
 *
 * Issue 20: @fastify/swagger and the UI (@fastify/static, yaml, the UI assets) are loaded on the
 * first request to either, not at start. Until then only the routes are recorded, as
 * @fastify/swagger itself records them (`onRoute`); the first request builds a small Fastify
 * instance that carries the plugins and those routes (never called: they only describe), and
 * the UI's requests are answered by it. So the document is the one @fastify/swagger writes for
 * this app, and the answers still pass through this app's hooks (headers, logging, metrics).
 */
export async function registerDocs(app: FastifyInstance, options: DocsOptions) {
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    // What @fastify/swagger leaves out anyway: HEAD twins of GET routes and hidden routes.
    if (route.method !== 'HEAD' && !(route.schema as { hide?: boolean } | undefined)?.hide) routes.push(route)
  })
  let docs: Promise<FastifyInstance> | undefined
  const docsApp = () => {
    docs ??= buildDocsApp(routes, options)
    return docs
  }
  app.addHook('onClose', async () => {
    if (docs) await (await docs).close()
  })
  // GET /api: where to go from here. A browser is sent to the docs page; a program gets the links
  // (the admin console included).
  app.get('/api', { schema: { hide: true } }, async (request, reply) => {
    if (/\btext\/html\b/.test(request.headers.accept ?? '')) return reply.redirect('/api/docs', 302)
    return {
      name: 'credential-service management API',
      links: {
        console: '/console/',
        docs: '/api/docs',
        openapi: '/api/docs-json',
        token: options.providerTokenUrl ? options.providerTokenUrl() : '/api/oauth2/token',
        health: '/api/health',
      },
    }
  })
  app.get('/api/docs-json', { schema: { hide: true } }, async () => {
    const document = (await docsApp()).swagger()
    return options.providerTokenUrl ? withTokenUrl(structuredClone(document), options) : document
  })
  const ui = async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = await (await docsApp()).inject({
      method: request.method as 'GET' | 'HEAD',
      url: request.url,
      headers: request.headers,
    })
    // A path the UI does not serve gets this app's own 404 (a problem document), as before.
    if (answer.statusCode === 404) return reply.callNotFound()
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value)
    reply.code(answer.statusCode)
    // An empty answer (a redirect, a 304) stays empty, without a content type of its own.
    return answer.rawPayload.length ? reply.send(answer.rawPayload) : reply.send()
  }
  app.get('/api/docs', { schema: { hide: true } }, ui)
  app.get('/api/docs/*', { schema: { hide: true } }, ui)
}

// Set again by this app's own reply (or meaningless across inject).
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'])

/** The served copy points at the provider; the cached description itself stays mode-neutral. */
function withTokenUrl<T>(document: T, { providerTokenUrl }: DocsOptions): T {
  const flow = (document as OpenApiDocument).components?.securitySchemes?.oauth2?.flows?.clientCredentials
  if (providerTokenUrl && flow) flow.tokenUrl = providerTokenUrl()
  return document
}

async function buildDocsApp(routes: readonly RouteOptions[], options: DocsOptions): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }, { examplesOf }] =
    await Promise.all([
      import('fastify'),
      import('@fastify/swagger'),
      import('@fastify/swagger-ui'),
      import('./docs-examples'),
    ])
  const docs = Fastify({ logger: false })
  // The routes are described, never validated or called here: no schema is compiled.
  docs.setValidatorCompiler(() => () => true)
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data))
  await docs.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Credential service management API',
        version: SERVICE_VERSION,
        description: API_DESCRIPTION,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      // Relative: the origin the description was fetched from. "Try it out" then calls the API
      // wherever the page was opened (http://127.0.0.1:3000 or PUBLIC_URL behind the ingress), and
      // a saved copy (the SDK's) names no host.
      servers: [{ url: '/', description: 'The origin this description is served from' }],
      tags: [...TAGS],
      webhooks: WEBHOOKS,
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            description:
              "Client credentials. The scopes are the service's roles: a token carries its client's roles, and each operation lists the roles it accepts (any one of them).",
            flows: { clientCredentials: { tokenUrl: '/api/oauth2/token', scopes: ROLE_DESCRIPTIONS } },
          },
        },
      },
    },
    transform: openApiTransform(examplesOf),
    transformObject: openApiTransformObject,
  })
  await docs.register(async (scope) => {
    for (const { method, url, schema, config, constraints } of routes)
      scope.route({
        method,
        url,
        schema,
        config,
        ...(constraints ? { constraints } : {}),
        handler: notCalled,
      })
  })
  await docs.register(swaggerUi, {
    routePrefix: '/api/docs',
    uiConfig: { persistAuthorization: false },
    initOAuth: { usePkceWithAuthorizationCodeGrant: false },
    ...(options.providerTokenUrl
      ? {
          transformSpecification: (document: Readonly<Record<string, unknown>>) =>
            withTokenUrl(document, options),
        }
      : {}),
  })
  await docs.ready()
  return docs
}

async function notCalled(): Promise<never> {
  throw new Error('the docs instance only describes routes')
}
