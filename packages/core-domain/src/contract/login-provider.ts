import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

const loginProviderFields = {
  id: zConfigId,
  description: z.string().max(2000).optional(),
  issuer: z
    .url()
    .max(2000)
    .describe(
      'Issuer identifier of the OpenID provider; its discovery document is read from `<issuer>/.well-known/openid-configuration`',
    ),
  clientId: z.string().min(1).max(500).describe('Our client id at the provider'),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'an RFC 6749 scope token'))
    .max(50)
    .default(['openid'])
    .describe('Scopes asked for at login; `openid` is always added'),
}

/** An upstream OpenID provider that logs holders in (authorization code flow, OpenID4VCI §5). */
export const zLoginProviderInput = z
  .object({
    ...loginProviderFields,
    clientSecret: z
      .string()
      .min(1)
      .max(1000)
      .nullable()
      .optional()
      .describe(
        'Client secret (client_secret_basic); stored encrypted, never returned. `null`: a public client (a stored secret is removed). Absent on create: a public client; absent on replace: the stored secret is kept only while `issuer` and `clientId` stay the same, otherwise 422',
      ),
  })
  .strict()
  .describe('Login provider, as sent to create or replace one')
  .meta({ id: 'LoginProviderDefinition' })
export type LoginProviderInput = z.input<typeof zLoginProviderInput>
export type LoginProviderData = z.output<typeof zLoginProviderInput>

export const zLoginProvider = z
  .object({
    ...loginProviderFields,
    description: z.string().nullable(),
    scopes: z.array(z.string()),
    hasClientSecret: z.boolean().describe('Whether a client secret is stored (it is never returned)'),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('A stored login provider')
  .meta({ id: 'LoginProvider' })
export type LoginProvider = z.infer<typeof zLoginProvider>
