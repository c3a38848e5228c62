import { z } from 'zod'
import { zPageQuery, zTimestamp } from './common'

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

/** A Token Status List of the tenant, as published at its `uri` (draft-ietf-oauth-status-list §5). */
export const zStatusList = z
  .object({
    id: z.string(),
    keyChainId: z.string().describe('The key chain whose credentials the list covers and which signs it'),
    uri: z
      .string()
      .describe('Where relying parties fetch the signed list (`status_list.uri` in credentials)'),
    bits: z.number().int().describe('Bits per entry'),
    size: z.number().int().describe('Entries in the published list'),
    capacity: z
      .number()
      .int()
      .describe('Entries handed out at most (random indexes stay cheap to find); then a new list opens'),
    allocated: z.number().int().describe('Entries handed out to credentials so far'),
    version: z.number().int().describe('Moves with every status change'),
    signedAt: zTimestamp
      .nullable()
      .describe('When the published token was last signed; null before the first fetch'),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .meta({ id: 'StatusList' })
export type StatusList = z.infer<typeof zStatusList>

export const zStatusListQuery = zPageQuery
  .extend({ keyChainId: z.string().max(128).optional().describe('Lists of this key chain only') })
  .strict()
export type StatusListQuery = z.infer<typeof zStatusListQuery>
