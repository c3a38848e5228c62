import {
  DomainError,
  zJwks,
  zManagementAuthorizationServerMetadata,
  zOAuthError,
  zTokenRequest,
  zTokenResponse,
} from '@credential-service/core-domain'
import { clientIp, failureLimit, oauthErrorHandler } from '@credential-service/server-kit'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { JWK } from 'jose'
import {
  type createTokenService,
  parseBasicAuthorization,
  presentedClientId,
} from '../services/token-service'

export interface OAuthRoutesOptions {
  exchange: ReturnType<typeof createTokenService>
  /** `{PUBLIC_URL}/api`: issuer of management tokens. */
  issuer: string
  jwks: { keys: JWK[] }
  /** Failed client authentications allowed per minute, per client id and per IP; 0: no limit. */
  failuresPerMinute: number
}

const tags = ['oauth2']

/**
 * The built-in token server (spec §5.3): client credentials only, JSON or form bodies, Basic or
 * body credentials. Errors follow RFC 6749 §5.2, not problem+json.
 */
export function oauthRoutes(options: OAuthRoutesOptions): FastifyPluginAsyncZod {
  return async (app) => {
    await app.register(formbody)
    app.setErrorHandler(oauthErrorHandler)
    // Checklist S-109: repeated wrong secrets for one client id, or from one IP, answer 429. Per
    // client id stops a distributed guesser; per IP stops one guesser trying many ids (and
    // spending a bcrypt compare on each).
    const failures = failureLimit(app, [
      {
        name: 'token-failures-client',
        perMinute: options.failuresPerMinute,
        subject: (req) => presentedClientId(req.headers.authorization, req.body as { client_id?: unknown }),
      },
      { name: 'token-failures-ip', perMinute: options.failuresPerMinute, subject: clientIp },
    ])

    app.post(
      '/api/oauth2/token',
      {
        schema: {
          operationId: 'requestToken',
          tags,
          summary: 'Get an access token with the client credentials grant (RFC 6749 §4.4)',
          description:
            'Body as `application/json` or `application/x-www-form-urlencoded`; credentials in the body or as `Authorization: Basic`.',
          body: zTokenRequest,
          response: {
            200: zTokenResponse,
            400: zOAuthError,
            401: zOAuthError,
            415: zOAuthError,
            429: zOAuthError.describe('Too many failed client authentications; see `Retry-After`'),
            503: zOAuthError,
          },
        },
      },
      async (req, reply) => {
        const token = await options.exchange({
          grantType: req.body.grant_type,
          bodyCredentials: { clientId: req.body.client_id, clientSecret: req.body.client_secret },
          basicCredentials: parseBasicAuthorization(req.headers.authorization),
          scope: req.body.scope,
          failures: { check: () => failures.check(req), record: () => failures.record(req) },
        })
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(token)
      },
    )

    app.get(
      '/api/oauth2/jwks',
      {
        schema: {
          operationId: 'getTokenJwks',
          tags,
          summary: 'Public keys that verify management access tokens',
          response: { 200: zJwks },
        },
      },
      async (_req, reply) => reply.header('cache-control', 'public, max-age=300').send(options.jwks),
    )

    // RFC 8414 metadata of the token server whose issuer is `{PUBLIC_URL}/api`.
    app.get(
      '/api/.well-known/oauth-authorization-server',
      {
        schema: {
          operationId: 'getTokenServerMetadata',
          tags,
          summary: 'Authorization server metadata (RFC 8414) of the built-in token server',
          response: { 200: zManagementAuthorizationServerMetadata },
        },
      },
      async () => ({
        issuer: options.issuer,
        token_endpoint: `${options.issuer}/oauth2/token`,
        jwks_uri: `${options.issuer}/oauth2/jwks`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        response_types_supported: [],
      }),
    )
  }
}

/**
 * OIDC mode (spec §5.4): the service issues no tokens. `/api/oauth2/token` answers a 404 problem
 * that names the provider's token endpoint, rather than the bare "no route" a client would puzzle
 * over; it is left out of the API description.
 */
export function providerTokenNotice(tokenUrl: () => string): FastifyPluginAsyncZod {
  return async (app) => {
    await app.register(formbody) // token requests are usually forms: answer them too, not with a 415
    app.post('/api/oauth2/token', { schema: { hide: true } }, async () => {
      throw new DomainError(
        'not_found',
        `this service uses an external identity provider (OIDC mode) and issues no tokens: request them with the client credentials grant at ${tokenUrl()}`,
      )
    })
  }
}
