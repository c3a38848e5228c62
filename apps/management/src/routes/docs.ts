import { openApiTransformObject, SERVICE_VERSION } from '@credential-service/server-kit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { jsonSchemaTransform } from 'fastify-type-provider-zod'

export interface DocsOptions {
  publicUrl: string
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
  "Wallets talk to the protocol endpoints, which are not part of this API. Each tenant's credential issuer is `/issuers/{tenantId}` (OpenID4VCI 1.0), with `offers/{id}`, `par`, `authorize`, `authorize/callback` (the redirect URI to register at login providers), `token`, `challenge` (wallet attestation challenges), `nonce`, `credential`, `deferred-credential`, `notification`, `jwks`, `crl/{keyChainId}` and `status-lists/{id}`; its metadata is at `/.well-known/openid-credential-issuer/issuers/{tenantId}`, `/.well-known/oauth-authorization-server/issuers/{tenantId}` and `/.well-known/jwt-vc-issuer/issuers/{tenantId}`. Each tenant's verifier is `/verifiers/{tenantId}` (OpenID4VP 1.0: `requests/{id}` and `responses/{id}`).",
  "What they do for a configuration is set here: `userAuthentication` and `refreshTokens` (authorization code flow), `dpop`, `walletAttestation` and `keyAttestation` (HAIP sender constraints and attestations), `statusManagement` (revocation), a tenant's `credentialEncryption`, and the login-providers and wallet-providers collections.",
].join('\n\n')

/**
 * OpenAPI description at `/api/docs-json` and Swagger UI at `/api/docs`. The UI's Authorize
 * button runs the client credentials flow against the token endpoint of the mode.
 */
export async function registerDocs(app: FastifyInstance, options: DocsOptions) {
  const { providerTokenUrl } = options
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Credential service management API',
        version: SERVICE_VERSION,
        description: API_DESCRIPTION,
      },
      servers: [{ url: options.publicUrl }],
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            description: 'Client credentials; each operation lists the roles it accepts.',
            flows: { clientCredentials: { tokenUrl: '/api/oauth2/token', scopes: {} } },
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: openApiTransformObject,
  })
  // The served copy points at the provider; the cached description itself stays mode-neutral.
  const withTokenUrl = <T>(document: T): T => {
    const flow = (document as OpenApiDocument).components?.securitySchemes?.oauth2?.flows?.clientCredentials
    if (providerTokenUrl && flow) flow.tokenUrl = providerTokenUrl()
    return document
  }
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    uiConfig: { persistAuthorization: false },
    initOAuth: { usePkceWithAuthorizationCodeGrant: false },
    ...(providerTokenUrl ? { transformSpecification: withTokenUrl } : {}),
  })
  app.get('/api/docs-json', { schema: { hide: true } }, async () =>
    providerTokenUrl ? withTokenUrl(structuredClone(app.swagger())) : app.swagger(),
  )
}
