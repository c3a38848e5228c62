import { z } from 'zod'
import { zPageQuery, zTimestamp } from './common'
import { zTenantId } from './tenant'

export const AUDIT_ACTIONS = ['create', 'update', 'delete', 'rotate-secret', 'replay'] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

export const AUDIT_RESOURCE_TYPES = [
  'tenant',
  'client',
  'key-chain',
  'credential-config',
  'presentation-config',
  'attribute-provider',
  'login-provider',
  'auth-server',
  'webhook-endpoint',
  'wallet-provider',
  'trust-list',
  'registrar-config',
  'federation-membership',
  'registration-certificate',
  'session',
  'credential-status',
  'webhook-delivery',
] as const
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number]

/**
 * One recorded change. PII-free by construction: who (client id), what (action, resource type and
 * id, names of changed fields) and when; never field values or secrets.
 */
export const zAuditEvent = z
  .object({
    id: z.string(),
    tenantId: z.string().nullable().describe('Null for operator-level changes (operator clients)'),
    actorClientId: z
      .string()
      .describe(
        'Client that made the change; `system:rotation` for the key rotation job, `system:config-import` for the configuration import',
      ),
    action: z.enum(AUDIT_ACTIONS),
    resourceType: z.enum(AUDIT_RESOURCE_TYPES),
    resourceId: z.string(),
    fields: z.array(z.string()).describe('Names of the changed fields, for updates that record them'),
    at: zTimestamp,
  })
  .meta({ id: 'AuditEvent' })
export type AuditEvent = z.infer<typeof zAuditEvent>

export const zAuditEventQuery = zPageQuery
  .extend({
    action: z.enum(AUDIT_ACTIONS).optional(),
    resourceType: z.enum(AUDIT_RESOURCE_TYPES).optional(),
    resourceId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Events of this resource id only (a session id names its deletion and its credentials' status changes)",
      ),
    since: zTimestamp.optional().describe('Events at or after this time'),
    until: zTimestamp.optional().describe('Events before this time'),
  })
  .strict()
export type AuditEventQuery = z.infer<typeof zAuditEventQuery>

/** The shorthand `/api/audit-events`: an operator may narrow it to one tenant. */
export const zOperatorAuditEventQuery = zAuditEventQuery
  .extend({
    tenantId: zTenantId
      .optional()
      .describe('Operators: events of this tenant only (all tenants and operator-level events when absent)'),
  })
  .strict()
export type OperatorAuditEventQuery = z.infer<typeof zOperatorAuditEventQuery>
