import { z } from 'zod'

/**
 * Statuses a credential can be given (draft-ietf-oauth-status-list §7.1): `valid` (0), `revoked`
 * (1, INVALID; final) and `suspended` (2).
 */
export const CREDENTIAL_STATUSES = ['valid', 'revoked', 'suspended'] as const
export const zCredentialStatusValue = z.enum(CREDENTIAL_STATUSES).meta({ id: 'CredentialStatusValue' })
export type CredentialStatusValue = z.infer<typeof zCredentialStatusValue>

/** A business reference given at offer creation and kept with the credentials' status entries. */
export const zStatusHandle = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')

export const zSessionStatusChange = z
  .object({ status: zCredentialStatusValue })
  .strict()
  .meta({ id: 'SessionStatusChange' })
export type SessionStatusChange = z.infer<typeof zSessionStatusChange>

export const zHandleStatusChange = z
  .object({
    handle: zStatusHandle.describe('The `statusHandle` given when the offers were created'),
    status: zCredentialStatusValue,
  })
  .strict()
  .meta({ id: 'HandleStatusChange' })
export type HandleStatusChange = z.infer<typeof zHandleStatusChange>

export const zCredentialStatusChanged = z
  .object({
    status: zCredentialStatusValue,
    credentials: z.number().int().describe('Credentials with a status list entry that the change covers'),
    changed: z.number().int().describe('Of those, the ones whose status changed (the others had it already)'),
  })
  .meta({ id: 'CredentialStatusChanged' })
export type CredentialStatusChanged = z.infer<typeof zCredentialStatusChanged>
