import { z } from 'zod'
import { ROLES, zRole } from '../roles'
import { zTimestamp } from './common'

export const zClientId = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{3,128}$/, 'letters, digits, ".", "_", ":" and "-", 3 to 128 characters')
  .describe('Client identifier, unique across the service')

const zSecret = z.string().min(16).max(256).describe('Client secret, at least 16 characters')
// Bounded so that a huge list is refused by one issue, before each item is checked.
const zRoles = z
  .array(zRole)
  .min(1)
  .max(ROLES.length)
  .refine((roles) => new Set(roles).size === roles.length, 'roles must not repeat')
export const MAX_ALLOWED_CONFIGS = 1000
const zConfigIdList = z.array(z.string().min(1).max(200)).max(MAX_ALLOWED_CONFIGS).nullable()

export const zClient = z
  .object({
    clientId: zClientId,
    tenantId: z.string().nullable().describe('Owning tenant; null for operator clients'),
    description: z.string().nullable(),
    roles: z.array(zRole),
    allowedPresentationConfigs: zConfigIdList.describe(
      'Empty or null: any presentation config (spec §5 rule 5)',
    ),
    allowedIssuanceConfigs: zConfigIdList.describe('Empty or null: any issuance config (spec §5 rule 5)'),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
    secretRotatedAt: zTimestamp,
  })
  .describe('API client (spec §2.5); its secret is never returned after creation')
  .meta({ id: 'Client' })
export type Client = z.infer<typeof zClient>

export const zClientCreate = z
  .object({
    clientId: zClientId.optional().describe('Generated (`cli_…`) when absent'),
    clientSecret: zSecret.optional().describe('Generated when absent; returned once'),
    description: z.string().max(2000).optional(),
    roles: zRoles,
    allowedPresentationConfigs: zConfigIdList.optional(),
    allowedIssuanceConfigs: zConfigIdList.optional(),
  })
  .strict()
  .meta({ id: 'ClientCreate' })
export type ClientCreate = z.infer<typeof zClientCreate>

export const zClientUpdate = z
  .object({
    description: z.string().max(2000).nullable().optional(),
    roles: zRoles.optional(),
    allowedPresentationConfigs: zConfigIdList.optional(),
    allowedIssuanceConfigs: zConfigIdList.optional(),
  })
  .strict()
  .meta({ id: 'ClientUpdate' })
export type ClientUpdate = z.infer<typeof zClientUpdate>

export const zClientSecretRotate = z
  .object({ clientSecret: zSecret.optional().describe('New secret; generated when absent') })
  .strict()
  .meta({ id: 'ClientSecretRotate' })
export type ClientSecretRotate = z.infer<typeof zClientSecretRotate>

/** Returned by create and rotate: the only time the secret is ever shown. */
export const zClientWithSecret = zClient
  .extend({ clientSecret: z.string().describe('Shown once; store it now') })
  .meta({ id: 'ClientWithSecret' })
export type ClientWithSecret = z.infer<typeof zClientWithSecret>
