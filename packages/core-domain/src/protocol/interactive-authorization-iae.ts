import { ProtocolError } from '../errors'
import { initialRequestSchema } from './interactive-authorization'
import { requestProblem } from './z-par-request'

/**
 * The earlier wire form of Interactive Authorization, which deployed issuers and wallets speak
 * (EUDIPLO, oid4vc-ts, the EUDI wallets): the Interactive Authorization Endpoint (IAE) of the
 * OpenID4VCI 1.1 working copy before 2d9fd4a (last at openid/OpenID4VCI 4ef9f26), §"Interactive
 * Authorization Endpoint" and the "Interactive Authorization Endpoint Binding" sections. Served
 * next to the current form on the same sessions; only the wire differs.
 */
export const IAE_DRAFT =
  'OpenID4VCI 1.1 working copy before 2d9fd4a (openid/OpenID4VCI 4ef9f26), Interactive Authorization Endpoint'

/** The endpoint's path under the issuer (authorization server) identifier. */
export const IAE_ENDPOINT_PATH = 'interactive-authorization'
/** AS metadata (§"OAuth 2.0 Authorization Server Metadata"): the endpoint, and whether only it is accepted. */
export const IAE_METADATA_PARAMETER = 'interactive_authorization_endpoint'
export const IAE_REQUIRED_METADATA_PARAMETER = 'require_interactive_authorization_request'

/**
 * The interaction type names a wallet may send (§"Initial Request"): the URNs of openid/OpenID4VCI
 * 33d8c5a and the plain names before them, which deployed wallets still send. The answer's `type`
 * is the name the wallet used ("MUST NOT set this to a value that was not included").
 */
export const IAE_INTERACTION_TYPES = {
  presentation: ['urn:openid:dcp:iae:openid4vp_presentation', 'openid4vp_presentation'],
  web: ['urn:openid:dcp:iae:redirect_to_web', 'redirect_to_web'],
} as const

/** §"Require Presentation": the response modes back to the same endpoint. */
export const IAE_RESPONSE_MODES = { direct_post: 'iae_post', 'direct_post.jwt': 'iae_post.jwt' } as const

/** The binding prefix of the "Interactive Authorization Endpoint Binding" sections. */
export const IAE_AUDIENCE_PREFIX = 'iae:'

const TYPE_NAME = /^(urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:\S+|[A-Za-z0-9_.-]{1,100})$/i
const zIaeInitialRequest = initialRequestSchema(
  TYPE_NAME,
  'interaction_types_supported must be a comma-separated list of interaction types',
)

/**
 * §"Initial Request": a PAR request plus `interaction_types_supported`, REQUIRED here (this form
 * has no FiPA fallback to the browser: a request without it is malformed).
 */
export function parseIaeInitialRequest(body: Record<string, unknown>) {
  if (body.interaction_types_supported === undefined)
    throw new ProtocolError('invalid_request', 'interaction_types_supported is required')
  const parsed = zIaeInitialRequest.safeParse(body)
  if (parsed.success) return parsed.data
  throw requestProblem(parsed.error, 'malformed interactive authorization request')
}

/** §"Interaction Required Response", §"Require Presentation": 200, `status` require_interaction. */
export const iaePresentationRequired = (
  type: string,
  authSession: string,
  openid4vpRequest: Record<string, unknown>,
) => ({ status: 'require_interaction', type, auth_session: authSession, openid4vp_request: openid4vpRequest })

/** §"Redirect to Web": the pushed request's `request_uri` and `expires_in`. */
export const iaeWebRequired = (type: string, authSession: string, requestUri: string, expiresIn: number) => ({
  status: 'require_interaction',
  type,
  auth_session: authSession,
  request_uri: requestUri,
  expires_in: expiresIn,
})

/** §"Authorization Code Response": 200 with `code` and `status` ok. */
export const iaeCodeResponse = (code: string) => ({ status: 'ok', code })
