import { z } from 'zod'
import { zClientSecretInput, zHasClientSecret } from './client-secret'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

/** How the credential endpoint checks a token of the server. */
export const AUTH_SERVER_TOKEN_CHECKS = ['jwt', 'introspection'] as const
export type AuthServerTokenCheck = (typeof AUTH_SERVER_TOKEN_CHECKS)[number]

/** What of a token names the configurations it authorises (OpenID4VCI 1.0 §5.1.1, §5.1.2). */
export const AUTH_SERVER_MAPPINGS = ['authorization_details', 'scope'] as const
export type AuthServerMapping = (typeof AUTH_SERVER_MAPPINGS)[number]

/** Where the claims of a credential come from when no offer's session is bound to the token. */
export const AUTH_SERVER_CLAIMS_SOURCES = ['token', 'attribute-provider'] as const
export type AuthServerClaimsSource = (typeof AUTH_SERVER_CLAIMS_SOURCES)[number]

const ISSUER =
  "Issuer identifier of the authorization server (RFC 8414 §2). Its metadata is read from `/.well-known/oauth-authorization-server` inserted before the identifier's path (RFC 8414 §3.1), else from `<issuer>/.well-known/openid-configuration`; the document's `issuer` must equal this value. Listed in the credential issuer metadata's `authorization_servers` (OpenID4VCI 1.0 §12.2.4). Unique within the tenant"
const TOKEN_CHECK =
  "`jwt` (default): access tokens are RFC 9068 JWTs (`typ` `at+jwt`) signed with a key of the server's `jwks_uri`. `introspection`: tokens are checked at the server's `introspection_endpoint` (RFC 7662) with `clientId` and `clientSecret` (client_secret_basic); an active answer is cached until the token expires at most"
const CONFIGS =
  'The credential configurations this server may authorise. A token naming any other is refused for it (403 `insufficient_scope`). Unknown ids are a 422 naming `body.credentialConfigurationIds.<index>`'
const MAPPING =
  "What of a token names configurations: `authorization_details` of type `openid_credential` (their `credential_configuration_id`, and `credential_identifiers` when the server returned some) and/or `scope` (each configuration's `config.scope`). Default both"
const CLAIMS =
  "`token` (default): the claims of a credential are the token's (JWT payload or introspection answer) named by the configuration's top-level field names. `attribute-provider`: the configuration's attribute provider is asked, with `user` = `{ issuer, sub, claims }` of the token. Either way an offer bound through `issuer_state` issues its own prepared claims"
const SINGLE_USE =
  'The server issues single-use tokens: a token (its `jti`, or its hash) is accepted for one credential request across all processes; a second use is `invalid_token`'

const authServerFields = {
  id: zConfigId,
  description: z.string().max(2000).optional(),
  issuer: z.url().max(2000).describe(ISSUER),
  credentialConfigurationIds: z.array(zConfigId).min(1).max(100).describe(CONFIGS),
  mapping: z
    .array(z.enum(AUTH_SERVER_MAPPINGS))
    .min(1)
    .max(2)
    .default(['authorization_details', 'scope'])
    .describe(MAPPING),
  claimsSource: z.enum(AUTH_SERVER_CLAIMS_SOURCES).default('token').describe(CLAIMS),
  singleUseTokens: z.boolean().default(false).describe(SINGLE_USE),
  clientId: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe('Our client id at the server, for introspection (`tokenCheck: introspection`)'),
}

function checkIntrospection(
  value: { tokenCheck: AuthServerTokenCheck; clientId?: unknown; clientSecret?: unknown },
  context: z.RefinementCtx,
) {
  if (value.tokenCheck === 'introspection' && value.clientId === undefined)
    context.addIssue({
      code: 'custom',
      path: ['clientId'],
      message: "required for tokenCheck 'introspection'",
    })
  if (value.tokenCheck === 'jwt' && typeof value.clientSecret === 'string')
    context.addIssue({ code: 'custom', path: ['clientSecret'], message: "not used by tokenCheck 'jwt'" })
}

/**
 * An external OAuth authorization server whose access tokens the tenant's credential endpoint
 * accepts (OpenID4VCI 1.0 §12.2.4 `authorization_servers`).
 */
export const zAuthServerInput = z
  .object({
    ...authServerFields,
    tokenCheck: z.enum(AUTH_SERVER_TOKEN_CHECKS).default('jwt').describe(TOKEN_CHECK),
    clientSecret: zClientSecretInput('for introspection (`tokenCheck: introspection`)'),
  })
  .strict()
  .superRefine(checkIntrospection)
  .describe('External authorization server, as sent to create or replace one')
  .meta({ id: 'AuthServerDefinition' })
export type AuthServerInput = z.input<typeof zAuthServerInput>
export type AuthServerData = z.output<typeof zAuthServerInput>

export const zAuthServer = z
  .object({
    ...authServerFields,
    description: z.string().nullable(),
    tokenCheck: z.enum(AUTH_SERVER_TOKEN_CHECKS).describe(TOKEN_CHECK),
    mapping: z.array(z.enum(AUTH_SERVER_MAPPINGS)).describe(MAPPING),
    claimsSource: z.enum(AUTH_SERVER_CLAIMS_SOURCES).describe(CLAIMS),
    singleUseTokens: z.boolean().describe(SINGLE_USE),
    clientId: z.string().nullable(),
    hasClientSecret: zHasClientSecret,
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('A stored external authorization server')
  .meta({ id: 'AuthServer' })
export type AuthServer = z.infer<typeof zAuthServer>
