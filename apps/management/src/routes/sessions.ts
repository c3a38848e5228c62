import {
  zIssuanceSession,
  zPage,
  zPresentationSession,
  zSession,
  zSessionListQuery,
  zSessionResultRequest,
  zSessionStats,
  zSessionStatsQuery,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createSessionService, type SessionServiceDeps } from '../services/session-service'

const KIND_NOTE =
  'A client sees the kinds its roles cover: `issuance:offer` issuance sessions, `presentation:request` presentation sessions; a session of another kind is 403.'

/** Paths of the sessions collection (`/api/sessions/{id}`, `/api/tenants/{tenantId}/sessions/{id}`). */
export const sessionsMount = (tenantInPath: boolean) =>
  tenantMount({ collection: 'sessions', tenantInPath, itemKey: 'id', itemSchema: z.string().max(100) })

/** Issuance and presentation sessions as one collection, under the tenant and as the shorthand. */
export function sessionRoutes(
  deps: SessionServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const sessions = sessionsMount(mount.tenantInPath)
  const tags = ['sessions']

  return async (app) => {
    const service = (req: FastifyRequest) =>
      createSessionService(deps, requireTenantScope(req), req.principal)

    app.get(
      sessions.base,
      {
        config: { roles: ['issuance:offer', 'presentation:request'] },
        schema: {
          operationId: sessions.op('listSessions'),
          tags,
          summary: 'List issuance and presentation sessions, newest first',
          description: [
            'Both kinds in one list, filtered by `kind`, `status`, `configId` and creation time. Items carry no claims and no notifications: read one session for those.',
            KIND_NOTE,
          ].join('\n\n'),
          params: sessions.listParams,
          querystring: zSessionListQuery,
          response: { 200: zPage(zSession), ...problemResponses },
        },
      },
      (req) => service(req).list(req.query),
    )

    const stats = tenantMount({
      collection: 'session-stats',
      tenantInPath: mount.tenantInPath,
      itemKey: 'id',
      itemSchema: z.string(),
    })
    app.get(
      stats.base,
      {
        config: { roles: ['issuance:offer', 'presentation:request'] },
        schema: {
          operationId: stats.op('getSessionStats'),
          tags,
          summary: 'Count sessions per configuration: issued, verified, failed, expired (the last 24 hours)',
          description: [
            "The console's dashboard. Counted from the database, so the same on every process (the Prometheus metrics are per process): the sessions created since `since`, per credential configuration (an offer of several counts for each) and per presentation configuration. Ended sessions deleted by the retention job are no longer counted.",
            "Each kind is a range scan of its sessions table's index on (tenant, created at).",
            KIND_NOTE.replace('; a session of another kind is 403', '; the other kind is absent'),
          ].join('\n\n'),
          params: stats.listParams,
          querystring: zSessionStatsQuery,
          response: { 200: zSessionStats, ...problemResponses },
        },
      },
      (req) => service(req).stats(req.query),
    )

    app.get(
      sessions.item,
      {
        config: { roles: ['issuance:offer', 'presentation:request'] },
        schema: {
          operationId: sessions.op('getSession'),
          tags,
          summary: 'Get a session: status, timestamps, configuration ids, failure reason',
          description: [
            'Never secrets. An issuance session carries its wallet notifications; a presentation session the disclosed claims, except for a same-device session (`responseCodeRequired`), whose claims only `POST …/sessions/{id}/result` releases.',
            KIND_NOTE,
          ].join('\n\n'),
          params: sessions.itemParams,
          response: { 200: z.union([zIssuanceSession, zPresentationSession]), ...problemResponses },
        },
      },
      (req) => service(req).get(req.params.id),
    )

    app.delete(
      sessions.item,
      {
        config: { roles: ['issuance:offer', 'presentation:request'] },
        schema: {
          operationId: sessions.op('deleteSession'),
          tags,
          summary: 'Delete a session with its claims, result, notifications and webhook deliveries',
          description: [
            'Whatever its status: an open offer or presentation request stops working at once. Deleting an issuance session needs `issuance:offer`, a presentation session `presentation:request`. The deletion is audited.',
            'Ended sessions are also deleted by the retention job `SESSION_RETENTION_DAYS` after their expiry.',
          ].join('\n\n'),
          params: sessions.itemParams,
          response: { 204: z.null().describe('Deleted'), ...problemResponses },
        },
      },
      async (req, reply) => {
        await service(req).delete(req.params.id)
        return reply.status(204).send(null)
      },
    )

    app.post(
      `${sessions.item}/result`,
      {
        config: { roles: ['presentation:request'] },
        schema: {
          operationId: sessions.op('releaseSessionResult'),
          tags,
          summary: 'Release the claims of a same-device presentation with its response code',
          description: [
            'OpenID4VP 1.0 §8.2 and HAIP 5.1: the wallet’s redirect takes a `response_code` to the browser that started the flow. Pass it here from that browser session to get the disclosed claims. The code works once: the claims leave the session as they are returned, and a second call is 403.',
            'This protects against session fixation (OpenID4VP §14.3): whoever relays a request to a victim and polls the session sees its status, never its claims. A wrong or spent code is 403, as is one for a result not released within an hour after the session expired (the retention job drops it); a session that was given no response code is 409. The code travels in the body so that it never lands in access logs.',
          ].join('\n\n'),
          params: sessions.itemParams,
          body: zSessionResultRequest,
          response: { 200: zPresentationSession, ...problemResponses },
        },
      },
      (req) => service(req).releaseResult(req.params.id, req.body.responseCode),
    )
  }
}
