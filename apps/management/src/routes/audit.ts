import {
  zAuditEvent,
  zAuditEventQuery,
  zOperatorAuditEventQuery,
  zPage,
} from '@credential-service/core-domain'
import type { Database } from '@credential-service/db-schema'
import { problemResponses, tenantMount } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createAuditService } from '../services/audit-service'

const ROLES = ['tenant:manage', 'tenant:admin'] as const
const WHAT =
  'Who (client id) did what (action, resource type and id, names of changed fields) and when, newest first. Never values or secrets. Filters: `action`, `resourceType`, `since` (inclusive), `until` (exclusive).'

/**
 * The audit trail, mounted under the tenant and as the shorthand `/api/audit-events`: a tenant's
 * own for a tenant-bound token; every tenant's (or one, with `tenantId`) for an operator.
 */
export function auditRoutes(db: Database, mount: { tenantInPath: boolean }): FastifyPluginAsyncZod {
  const paths = tenantMount({
    collection: 'audit-events',
    tenantInPath: mount.tenantInPath,
    itemKey: 'id',
    itemSchema: z.string().max(100),
  })

  return async (app) => {
    app.get(
      paths.base,
      {
        config: { roles: ROLES },
        schema: {
          operationId: paths.op('listAuditEvents'),
          tags: ['audit'],
          summary: mount.tenantInPath
            ? 'List the audit events of a tenant'
            : 'List audit events: the token’s tenant, or for an operator every tenant',
          description: mount.tenantInPath
            ? WHAT
            : `${WHAT}\n\nA tenant-bound token reads its own tenant (another \`tenantId\` is 404). An operator token reads every tenant and the operator-level changes, or one tenant with \`tenantId\`.`,
          params: paths.listParams,
          querystring: mount.tenantInPath ? zAuditEventQuery : zOperatorAuditEventQuery,
          response: { 200: zPage(zAuditEvent), ...problemResponses },
        },
      },
      (req) => createAuditService(db, req.principal).list(req.tenantScope, req.query),
    )
  }
}
