import { z } from 'zod'
import { zClientSecretInput, zHasClientSecret } from './client-secret'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

export const LOGIN_PROVIDER_KINDS = ['openid', 'presentation'] as const
export type LoginProviderKind = (typeof LOGIN_PROVIDER_KINDS)[number]

const KIND =
  '`openid` (default): an upstream OpenID provider the browser is sent to. `presentation`: the holder presents a credential (e.g. a PID) as the presentation configuration `presentationConfigId` asks; in the browser `/authorize` shows the OpenID4VP request as a QR code and a same-device link, and wallets using Interactive Authorization (OpenID4VCI 1.1) present inline'
const ISSUER =
  'Issuer identifier of the OpenID provider; its discovery document is read from `<issuer>/.well-known/openid-configuration`. Required for `kind: openid`, absent for `presentation`'
const PRESENTATION_CONFIG =
  'Kind `presentation`: the presentation configuration whose DCQL query the holder answers (its trust decides which issuers count); required for that kind, absent otherwise. Deleting that configuration is refused (409) while this provider names it'

const loginProviderFields = {
  id: zConfigId,
  description: z.string().max(2000).optional(),
  issuer: z.url().max(2000).optional().describe(ISSUER),
  clientId: z.string().min(1).max(500).optional().describe('Our client id at the provider (`kind: openid`)'),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'an RFC 6749 scope token'))
    .max(50)
    .default(['openid'])
    .describe('Scopes asked for at login (`kind: openid`); `openid` is always added'),
  presentationConfigId: zConfigId.optional().describe(PRESENTATION_CONFIG),
}

/** Which fields each kind needs and forbids: one object, so errors name the field, not a union branch. */
function checkKind(
  value: { kind: LoginProviderKind; issuer?: unknown; clientId?: unknown; presentationConfigId?: unknown },
  context: z.RefinementCtx,
) {
  const need = (key: 'issuer' | 'clientId' | 'presentationConfigId') => {
    if (value[key] === undefined)
      context.addIssue({ code: 'custom', path: [key], message: `required for kind '${value.kind}'` })
  }
  const forbid = (key: 'issuer' | 'clientId' | 'presentationConfigId') => {
    if (value[key] !== undefined)
      context.addIssue({ code: 'custom', path: [key], message: `not used by kind '${value.kind}'` })
  }
  if (value.kind === 'openid') {
    need('issuer')
    need('clientId')
    forbid('presentationConfigId')
  } else {
    need('presentationConfigId')
    forbid('issuer')
    forbid('clientId')
  }
}

/**
 * What logs holders in for the authorization code flow (OpenID4VCI §5): an upstream OpenID
 * provider, or a presentation of another credential (presentation during issuance).
 */
export const zLoginProviderInput = z
  .object({
    ...loginProviderFields,
    kind: z.enum(LOGIN_PROVIDER_KINDS).default('openid').describe(KIND),
    clientSecret: zClientSecretInput('for `kind: openid`', 'Absent on create, or `null`: a public client. '),
  })
  .strict()
  .superRefine(checkKind)
  .describe('Login provider, as sent to create or replace one')
  .meta({ id: 'LoginProviderDefinition' })
export type LoginProviderInput = z.input<typeof zLoginProviderInput>
export type LoginProviderData = z.output<typeof zLoginProviderInput>

export const zLoginProvider = z
  .object({
    ...loginProviderFields,
    kind: z.enum(LOGIN_PROVIDER_KINDS).describe(KIND),
    description: z.string().nullable(),
    issuer: z.string().nullable().describe(ISSUER),
    clientId: z.string().nullable(),
    presentationConfigId: z.string().nullable().describe(PRESENTATION_CONFIG),
    scopes: z.array(z.string()),
    hasClientSecret: zHasClientSecret,
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('A stored login provider')
  .meta({ id: 'LoginProvider' })
export type LoginProvider = z.infer<typeof zLoginProvider>
