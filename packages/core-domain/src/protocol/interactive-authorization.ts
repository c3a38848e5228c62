import { z } from 'zod'
import { ProtocolError } from '../errors'
import { MAX_JSON_DEPTH } from '../rules/json-depth'
import { zJsonText } from './z-json-text'
import {
  isS256Challenge,
  PAR_PARAMETERS,
  requestProblem,
  S256_PROBLEM,
  zFormParameters,
} from './z-par-request'

/**
 * Every wire detail of Interactive Authorization (issue 26, part 1: presentation during
 * issuance) in one place, so the next draft is a small change here: parameter names, interaction
 * type URNs, response shapes, response modes, the binding prefix and handover name, and the
 * schemas of the two requests.
 *
 * Followed: the OpenID4VCI 1.1 working copy at openid/OpenID4VCI commit 2d9fd4a ("Building
 * Interactive Authorization on top of first party apps draft (#736)"), §"Interactive
 * Authorization" and the "Interactive Authorization Binding" sections of Appendix A, which
 * profiles OAuth 2.0 for First-Party Applications (draft-ietf-oauth-first-party-apps-03, FiPA) §5.
 * The earlier form (Interactive Authorization Endpoint) is served too, on the same core; its wire
 * details are in interactive-authorization-iae.ts.
 */
export const IA_DRAFT =
  'OpenID4VCI 1.1 working copy (openid/OpenID4VCI 2d9fd4a), Interactive Authorization over draft-ietf-oauth-first-party-apps-03'

/** The endpoint's path under the issuer (authorization server) identifier. */
export const IA_ENDPOINT_PATH = 'authorize-challenge'
/** AS metadata parameter announcing the endpoint (FiPA §4.1; OpenID4VCI 1.1 §"Interactive Authorization"). */
export const IA_METADATA_PARAMETER = 'authorization_challenge_endpoint'

/** The interaction types this server can require (§"Initial Request"), by their URNs. */
export const INTERACTION_TYPES = {
  /** §"Require Presentation": an OpenID4VP presentation to the endpoint itself. */
  presentation: 'urn:openid:dcp:ia:openid4vp_presentation',
  /** §"Authorization via Web": the pushed request continues at /authorize in a browser. */
  web: 'urn:openid:dcp:ia:auth_via_web',
} as const
export type InteractionType = keyof typeof INTERACTION_TYPES

/** The OAuth error codes of the endpoint (FiPA §5.2.2; §"Authorization Challenge Error Response"). */
export const IA_ERRORS = {
  /** 401: more interaction needed (FiPA §5.2.2). */
  insufficientAuthorization: 'insufficient_authorization',
  /** 400: none of the wallet's interaction types will do. */
  missingInteractionType: 'missing_interaction_type',
  /** 400 (FiPA §5.2.2.1): the auth_session is unknown, expired or used. */
  invalidSession: 'invalid_session',
  /**
   * 400 (FiPA §5.2.2.1.1): a first-party client that does not speak this profile (no
   * `interaction_types_supported`) falls back to the whole authorization code flow in a browser
   * (PAR, /authorize), as wallets built on FiPA alone (oid4vc-ts 0.4) do.
   */
  redirectToWeb: 'redirect_to_web',
} as const

/**
 * The response modes of the OpenID4VP request (§"Require Presentation"): `ia_post`, or
 * `ia_post.jwt` encrypted (OpenID4VP 1.0 §8.3), from the presentation configuration's
 * `direct_post` / `direct_post.jwt`.
 */
export const IA_RESPONSE_MODES = { direct_post: 'ia_post', 'direct_post.jwt': 'ia_post.jwt' } as const
export type IaResponseMode = (typeof IA_RESPONSE_MODES)[keyof typeof IA_RESPONSE_MODES]

/** The derived origin (RFC 6454 §4) of the endpoint: `expected_origins` of a signed request. */
export const iaOrigin = (endpoint: string) => new URL(endpoint).origin

/**
 * SD-JWT VC binding (§"Interactive Authorization Binding" of dc+sd-jwt, A.3.5): the KB-JWT `aud`
 * is `ia:` + the derived origin of the endpoint by the text, `ia:` + the endpoint URL by its example
 * (and the jwt_vc_json and ldp_vc sections); iaAudiences (interactive-authorization-forms.ts) takes both.
 */
export const IA_AUDIENCE_PREFIX = 'ia:'

/**
 * mdoc binding (§"Interactive Authorization Binding" of mso_mdoc): SessionTranscript
 * [null, null, ["OpenID4VCIIAEHandover", sha256(cbor([endpoint, nonce, jwkThumbprint | null]))]],
 * the endpoint without the `ia:` prefix and the thumbprint of the response encryption key for
 * `ia_post.jwt`.
 */
export const IA_MDOC_HANDOVER = 'OpenID4VCIIAEHandover'

/** The parameters of the requests, by name. */
export const IA_PARAMETERS = {
  interactionTypesSupported: 'interaction_types_supported',
  authSession: 'auth_session',
  openid4vpResponse: 'openid4vp_response',
} as const

const URN = /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:\S+$/i
const TYPES_PROBLEM = 'interaction_types_supported must be a comma-separated list of URNs'

/**
 * An Initial Request schema whose interaction type names match `typeName` (URNs in this draft; the
 * earlier IAE form also takes the plain names its deployed wallets send).
 */
export const initialRequestSchema = (typeName: RegExp, typesProblem: string) =>
  zFormParameters.pipe(
    z
      .object({
        ...PAR_PARAMETERS,
        redirect_uri: PAR_PARAMETERS.redirect_uri.optional(),
        interaction_types_supported: z
          .string({ error: 'interaction_types_supported is required' })
          .max(2000)
          .transform((value, context) => {
            const types = value
              .split(',')
              .map((type) => type.trim())
              .filter(Boolean)
            if (!types.length || types.some((type) => !typeName.test(type))) {
              context.addIssue({ code: 'custom', message: typesProblem })
              return z.NEVER
            }
            return [...new Set(types)]
          }),
      })
      .loose()
      .refine(isS256Challenge, S256_PROBLEM),
  )

/**
 * The Initial Request (§"Initial Request"): the authorization request parameters of a pushed
 * request (FiPA §5.1 takes those of RFC 6749 §4.1.1 with PKCE; `redirect_uri` optional, needed only
 * for the web interaction) and `interaction_types_supported`, REQUIRED, comma-separated URNs whose
 * order is not significant. A request object (`request`) is refused as at PAR.
 */
export const zIaInitialRequest = initialRequestSchema(URN, TYPES_PROBLEM)
export type IaInitialRequest = z.infer<typeof zIaInitialRequest>

/**
 * `openid4vp_response`: a JSON-encoded object of the OpenID4VP Authorization Response parameters
 * (`vp_token`, or `response` for `ia_post.jwt`), or of an Authorization Error Response.
 */
const zOpenid4vpResponse = zJsonText(
  {
    tooDeep: `openid4vp_response nests deeper than ${MAX_JSON_DEPTH} levels`,
    notJson: 'openid4vp_response must be a JSON object',
  },
  z.record(z.string(), z.unknown(), { error: 'openid4vp_response must be a JSON object' }),
)

/**
 * An Intermediate Request answering the presentation interaction (§"Intermediate Request",
 * §"Require Presentation"): the `auth_session` of the Interaction Required Response and the
 * `openid4vp_response`.
 */
export const zIaPresentationRequest = zFormParameters.pipe(
  z
    .object({
      auth_session: z
        .string({ error: 'auth_session is required' })
        .min(1, { error: 'auth_session is required' })
        .max(200),
      openid4vp_response: zOpenid4vpResponse,
    })
    .loose(),
)
export type IaPresentationRequest = z.infer<typeof zIaPresentationRequest>

/** A request with `auth_session` is an Intermediate Request; without, an Initial Request. */
export const isIntermediateRequest = (body: Record<string, unknown>) =>
  body[IA_PARAMETERS.authSession] !== undefined

export function parseIaInitialRequest(body: Record<string, unknown>): IaInitialRequest {
  if (body[IA_PARAMETERS.interactionTypesSupported] === undefined)
    throw new ProtocolError(
      IA_ERRORS.redirectToWeb,
      'interaction_types_supported is absent: use the authorization code flow (PAR and the authorization endpoint)',
    )
  const parsed = zIaInitialRequest.safeParse(body)
  if (parsed.success) return parsed.data
  throw requestProblem(parsed.error, 'malformed authorization challenge request')
}

export function parseIaPresentationRequest(body: Record<string, unknown>): IaPresentationRequest {
  const parsed = zIaPresentationRequest.safeParse(body)
  if (parsed.success) return parsed.data
  throw requestProblem(parsed.error, 'malformed authorization challenge request')
}

/** §"Require Presentation": the 401 body asking for a presentation (DC API form request, A.2/A.3). */
export const presentationRequired = (authSession: string, openid4vpRequest: Record<string, unknown>) => ({
  error: IA_ERRORS.insufficientAuthorization,
  interaction_type_required: INTERACTION_TYPES.presentation,
  auth_session: authSession,
  openid4vp_request: openid4vpRequest,
})

/** §"Authorization via Web": the 401 body handing out the pushed request's `request_uri`. */
export const webRequired = (authSession: string, requestUri: string, expiresIn: number) => ({
  error: IA_ERRORS.insufficientAuthorization,
  interaction_type_required: INTERACTION_TYPES.web,
  auth_session: authSession,
  request_uri: requestUri,
  expires_in: expiresIn,
})

/** FiPA §5.2.1: the success response, 200. */
export const authorizationCodeResponse = (code: string) => ({ authorization_code: code })
