import { openApiTransformObject, SERVICE_VERSION } from '@credential-service/server-kit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { jsonSchemaTransform } from 'fastify-type-provider-zod'

/**
 * OpenAPI description at `/api/docs-json` and Swagger UI at `/api/docs`. The UI's Authorize
 * button runs the client credentials flow against `/api/oauth2/token` (spec §5.3).
 */
export async function registerDocs(
  app: FastifyInstance,
  options: { publicUrl: string; builtInTokenServer: boolean },
) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Credential service management API',
        version: SERVICE_VERSION,
        description:
          'Manages tenants, API clients, configurations and sessions. Errors are RFC 9457 `application/problem+json`; the token endpoint answers RFC 6749 errors. A change to a tenant, client, key chain or configuration reaches the issuer and verifier processes when it commits (PostgreSQL NOTIFY); a cached copy is never older than 5 seconds.',
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
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    uiConfig: { persistAuthorization: false },
    initOAuth: options.builtInTokenServer ? { usePkceWithAuthorizationCodeGrant: false } : {},
  })
  app.get('/api/docs-json', { schema: { hide: true } }, async () => app.swagger())
}
