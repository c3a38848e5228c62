import {
  DomainError,
  InvalidInputError,
  ProtocolError,
  RateLimitedError,
} from '@credential-service/core-domain'
import { oauthErrorHandler, type WalletLimits, walletLimit } from '@credential-service/server-kit'
import type { FastifyError } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { createCredentialEndpoint } from '../services/credential-endpoint'
import type { IssuanceDeps } from '../services/issuance'
import { perTenant } from '../services/per-tenant'
import { perTenantScope } from '../tenant-scope'
import { dpopNonceHeader, requireTenant, tenantParams } from './shared'

const FRAMEWORK_DETAILS: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'the request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the request body is empty',
  FST_ERR_CTP_BODY_TOO_LARGE: 'the request body is larger than allowed',
}

/**
 * §8.3.1.2: a request that is "otherwise malformed" is invalid_credential_request, and
 * `invalid_request` is no error of these endpoints (checklist I-60, I-69). So whatever Fastify or
 * the input guard refuses about the request (empty or malformed JSON, NUL, lone surrogates, too
 * deep nesting, size) is answered so; the HTTP status stays (400, or 413).
 */
function asCredentialRequestError(error: unknown): unknown {
  if (error instanceof InvalidInputError) return new ProtocolError('invalid_credential_request', error.detail)
  if (error instanceof RateLimitedError)
    return new ProtocolError('invalid_credential_request', error.detail, { status: 429 })
  if (error instanceof DomainError) return error
  const { code, statusCode, message } = error as Partial<FastifyError>
  if (!code?.startsWith('FST_') || !statusCode || statusCode < 400 || statusCode >= 500) return error
  return new ProtocolError('invalid_credential_request', FRAMEWORK_DETAILS[code] ?? message ?? code, {
    status: statusCode,
  })
}

/**
 * The credential and deferred credential endpoints (OpenID4VCI 1.0 §8, §9). Their own scope reads
 * every non-JSON body as text: the service accepts `application/json` and `application/jwt` (an encrypted
 * request, §10) and refuses any other type as invalid_credential_request (checklist I-60) rather
 * than with Fastify's 415.
 */
export function credentialRoutes(deps: IssuanceDeps, limits: WalletLimits): FastifyPluginAsyncZod {
  const scopes = perTenantScope(deps)
  const endpoint = perTenant((tenant) => createCredentialEndpoint(scopes(tenant)))
  return async (app) => {
    // JSON keeps the guarded parser of every app (depth, NUL, prototype poisoning); the rest is text.
    app.addContentTypeParser(['application/jwt', '*'], { parseAs: 'string' }, (_req, body, done) =>
      done(null, body),
    )
    app.setErrorHandler((error, req, reply) => {
      if (error instanceof RateLimitedError) reply.header('retry-after', error.retryAfterSeconds)
      return oauthErrorHandler(asCredentialRequestError(error), req, reply)
    })

    for (const [path, name] of [
      ['credential', 'credential'],
      ['deferred-credential', 'deferredCredential'],
    ] as const) {
      const options = {
        schema: { params: tenantParams },
        onRequest: [walletLimit(app, limits, path), dpopNonceHeader(deps)],
      }
      app.post(`/issuers/:tenant/${path}`, options, async (req, reply) => {
        const tenant = req.params.tenant
        await requireTenant(deps, tenant)
        const answer = await endpoint(tenant)[name]({
          resource: {
            headers: req.headers,
            method: req.method,
            url: `${deps.publicUrl}/issuers/${tenant}/${path}`,
          },
          contentType: req.headers['content-type'],
          body: req.body,
        })
        return reply
          .status(answer.status)
          .header('cache-control', 'no-store')
          .type(answer.contentType)
          .send(answer.payload)
      })
    }
  }
}
