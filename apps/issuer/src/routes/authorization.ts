import type { IncomingHttpHeaders } from 'node:http'
import {
  IA_FORM,
  IAE_FORM,
  isIntermediateRequest,
  ProtocolError,
  parseAuthorizationRequest,
  parseIaPresentationRequest,
  parseParRequest,
} from '@credential-service/core-domain'
import { type WalletLimits, walletLimit } from '@credential-service/server-kit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  authorize,
  createLoginScope,
  openIdCallback,
  type PushSender,
  presentationReturn,
  presentationReturnPage,
  presentationStatus,
  pushAuthorizationRequest,
} from '../login'
import { authenticateWalletClient } from '../services/client-attestation'
import { verifyDpop } from '../services/dpop'
import { createInteractiveAuthorizationService } from '../services/interactive-authorization'
import type { IssuanceDeps } from '../services/issuance'
import { perTenant } from '../services/per-tenant'
import { perTenantScope } from '../tenant-scope'
import { anyBody, attestationChallengeHeader, dpopNonceHeader, requireTenant, tenantParams } from './shared'

const query = (keys: string[]) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.string().max(4000).optional()])))

/** RFC 9126 §2.1 (I-30): a pushed request is a form body; JSON and others are refused before parsing. */
const formOnly: onRequestHookHandler = async (req) => {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase()
  if (type !== 'application/x-www-form-urlencoded')
    throw new ProtocolError('invalid_request', 'send the pushed request as application/x-www-form-urlencoded')
}

/**
 * PAR, the authorization endpoint and the upstream login callback (OpenID4VCI 1.0 §5, RFC 9126).
 * Registered inside the oid4vci scope, which parses form bodies.
 */
export function authorizationRoutes(deps: IssuanceDeps, limits: WalletLimits): FastifyPluginAsyncZod {
  const scopes = perTenantScope(deps)
  const login = perTenant((tenant) => createLoginScope(scopes(tenant)))
  // One core, two wire forms (issue 37): the same requests, auth_sessions and presentation sessions.
  const interactive = {
    ia: perTenant((tenant) => createInteractiveAuthorizationService(scopes(tenant), IA_FORM)),
    iae: perTenant((tenant) => createInteractiveAuthorizationService(scopes(tenant), IAE_FORM)),
  }

  /** Who sent a pushed request (PAR or the Initial and Intermediate Requests): DPoP key, attested wallet. */
  async function senderOf(
    tenant: string,
    path: string,
    req: { headers: IncomingHttpHeaders; method: string; body: Record<string, unknown> },
  ): Promise<PushSender> {
    const dpop = await verifyDpop(scopes(tenant), {
      headers: req.headers,
      method: req.method,
      url: `${deps.publicUrl}/issuers/${tenant}/${path}`,
      at: 'token',
    })
    const clientId = typeof req.body.client_id === 'string' ? req.body.client_id : undefined
    const walletClient = await authenticateWalletClient(scopes(tenant), { headers: req.headers, clientId })
    return { dpopJkt: dpop?.jkt, walletClient }
  }

  /** PAR and the challenge endpoint take the same rate limit, DPoP and attestation nonces, forms only. */
  const pushedRequestHooks = (app: FastifyInstance) => [
    walletLimit(app, limits, 'par'),
    dpopNonceHeader(deps),
    attestationChallengeHeader(deps),
    formOnly,
  ]

  return async (app) => {
    app.post(
      '/issuers/:tenant/par',
      {
        schema: { params: tenantParams, body: anyBody },
        onRequest: pushedRequestHooks(app),
      },
      async (req, reply) => {
        const tenant = req.params.tenant
        await requireTenant(deps, tenant)
        // PAR takes the token endpoint's client authentication and DPoP (HAIP 4.3, RFC 9449 §10):
        // a DPoP proof here binds the code to its key, like dpop_jkt.
        const sender = await senderOf(tenant, 'par', req)
        // Parsed after the sender is authenticated, the order in which the endpoint has always refused.
        const pushed = await pushAuthorizationRequest(login(tenant), parseParRequest(req.body), sender)
        return reply.status(201).header('cache-control', 'no-store').send(pushed)
      },
    )

    // OpenID4VCI 1.1 §"Interactive Authorization" (FiPA -03 §5): the Authorization Challenge
    // Endpoint, and the earlier form's Interactive Authorization Endpoint. Initial and follow-up
    // requests are forms, authenticated as at PAR (DPoP, wallet attestation); every answer is JSON
    // with Cache-Control: no-store.
    for (const form of [IA_FORM, IAE_FORM])
      app.post(
        `/issuers/:tenant/${form.path}`,
        {
          schema: { params: tenantParams, body: anyBody },
          onRequest: pushedRequestHooks(app),
        },
        async (req, reply) => {
          const tenant = req.params.tenant
          await requireTenant(deps, tenant)
          reply.header('cache-control', 'no-store')
          const sender = await senderOf(tenant, form.path, req)
          const service = interactive[form.name](tenant)
          const outcome = isIntermediateRequest(req.body)
            ? await service.presented(parseIaPresentationRequest(req.body), sender)
            : await service.initial(form.parseInitial(req.body), sender)
          const answer = form.answer(outcome)
          return reply.status(answer.status).send(answer.body)
        },
      )

    // RFC 9126 §2.1: the pushed authorization request endpoint takes POST only (I-30).
    app.get('/issuers/:tenant/par', { schema: { params: tenantParams } }, async (_req, reply) => {
      reply.status(405).header('allow', 'POST')
      throw new ProtocolError('invalid_request', 'use POST for pushed authorization requests', {
        status: 405,
      })
    })

    app.get(
      '/issuers/:tenant/authorize',
      {
        schema: { params: tenantParams, querystring: query(['client_id', 'request_uri']) },
        onRequest: walletLimit(app, limits, 'authorize'),
      },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        const step = await authorize(
          login(req.params.tenant),
          parseAuthorizationRequest(req.query),
          req.headers.cookie,
        )
        if (step.cookie) reply.header('set-cookie', step.cookie)
        if ('page' in step) return reply.status(200).headers(step.page.headers).send(step.page.html)
        return reply.header('cache-control', 'no-store').redirect(step.redirect, 303)
      },
    )

    // Presentation login (a login provider of kind `presentation`): the page's poll, bound to the
    // login cookie, and the same-device return with its response code (OpenID4VP 1.0 §13.3).
    app.get(
      '/issuers/:tenant/authorize/presentation/status',
      {
        schema: { params: tenantParams, querystring: query(['request']) },
        onRequest: walletLimit(app, limits, 'authorize'),
      },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        const status = await presentationStatus(
          login(req.params.tenant),
          req.query.request,
          req.headers.cookie,
        )
        return reply.header('cache-control', 'no-store').send(status)
      },
    )

    app.get(
      '/issuers/:tenant/authorize/presentation/return',
      {
        schema: { params: tenantParams, querystring: query(['request']) },
        onRequest: walletLimit(app, limits, 'authorize'),
      },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        const { html, headers } = await presentationReturnPage(
          login(req.params.tenant),
          req.query.request ?? '',
        )
        return reply.status(200).headers(headers).send(html)
      },
    )

    app.post(
      '/issuers/:tenant/authorize/presentation/return',
      {
        schema: {
          params: tenantParams,
          body: z.object({ request: z.string().max(200), response_code: z.string().max(500) }),
        },
        onRequest: walletLimit(app, limits, 'authorize'),
      },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        // A cross-site form cannot post JSON without a preflight; the cookie is SameSite=Lax anyway.
        const step = await presentationReturn(
          login(req.params.tenant),
          req.body.request,
          req.body.response_code,
          req.headers.cookie,
        )
        return reply.header('cache-control', 'no-store').send({ redirect: step.redirect })
      },
    )

    app.get(
      '/issuers/:tenant/authorize/callback',
      {
        schema: { params: tenantParams, querystring: query(['state', 'code', 'error', 'iss']).loose() },
        onRequest: walletLimit(app, limits, 'authorize'),
      },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        const step = await openIdCallback(login(req.params.tenant), req.query, req.headers.cookie)
        return reply.header('cache-control', 'no-store').redirect(step.redirect, 303)
      },
    )
  }
}
