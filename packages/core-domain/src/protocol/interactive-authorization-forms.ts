import { ProtocolError } from '../errors'
import {
  authorizationCodeResponse,
  IA_AUDIENCE_PREFIX,
  IA_ENDPOINT_PATH,
  IA_ERRORS,
  IA_METADATA_PARAMETER,
  IA_RESPONSE_MODES,
  type IaInitialRequest,
  INTERACTION_TYPES,
  type InteractionType,
  iaOrigin,
  parseIaInitialRequest,
  presentationRequired,
  webRequired,
} from './interactive-authorization'
import {
  IAE_AUDIENCE_PREFIX,
  IAE_ENDPOINT_PATH,
  IAE_INTERACTION_TYPES,
  IAE_METADATA_PARAMETER,
  IAE_RESPONSE_MODES,
  iaeCodeResponse,
  iaePresentationRequired,
  iaeWebRequired,
  parseIaeInitialRequest,
} from './interactive-authorization-iae'

/** What the issuer decided for an Interactive Authorization request; each form puts it on the wire. */
export type IaOutcome =
  | { kind: 'code'; code: string }
  | { kind: 'presentation'; type: string; authSession: string; openid4vpRequest: Record<string, unknown> }
  | { kind: 'web'; type: string; authSession: string; requestUri: string; expiresIn: number }

export type IaFormResponseMode = 'ia_post' | 'ia_post.jwt' | 'iae_post' | 'iae_post.jwt'

/**
 * One wire form of Interactive Authorization: the current draft's Authorization Challenge
 * Endpoint (`ia`) or the earlier Interactive Authorization Endpoint (`iae`). Both run on the same
 * core (pushed request, auth_session, presentation session); only these details differ.
 */
export interface IaWireForm {
  name: 'ia' | 'iae'
  path: string
  metadataParameter: string
  audiencePrefix: string
  responseModes: Record<'direct_post' | 'direct_post.jwt', IaFormResponseMode>
  /** The names a wallet may give each interaction this server can require, the preferred first. */
  interactionTypes: Record<InteractionType, readonly string[]>
  /**
   * Mixed into the stored hash of an auth_session, so that an auth_session is unknown at the other
   * form's endpoint (and stays usable at its own). Empty for `ia`: its hashes predate the IAE form.
   */
  authSessionScope: string
  parseInitial(body: Record<string, unknown>): IaInitialRequest
  answer(outcome: IaOutcome): { status: 200 | 401; body: Record<string, unknown> }
}

export const IA_FORM: IaWireForm = {
  name: 'ia',
  path: IA_ENDPOINT_PATH,
  metadataParameter: IA_METADATA_PARAMETER,
  audiencePrefix: IA_AUDIENCE_PREFIX,
  responseModes: IA_RESPONSE_MODES,
  interactionTypes: { presentation: [INTERACTION_TYPES.presentation], web: [INTERACTION_TYPES.web] },
  authSessionScope: '',
  parseInitial: parseIaInitialRequest,
  // FiPA §5.2.1 (200 with the code) and §5.2.2 (401 insufficient_authorization).
  answer(outcome) {
    if (outcome.kind === 'code') return { status: 200, body: authorizationCodeResponse(outcome.code) }
    if (outcome.kind === 'presentation')
      return { status: 401, body: presentationRequired(outcome.authSession, outcome.openid4vpRequest) }
    return { status: 401, body: webRequired(outcome.authSession, outcome.requestUri, outcome.expiresIn) }
  },
}

export const IAE_FORM: IaWireForm = {
  name: 'iae',
  path: IAE_ENDPOINT_PATH,
  metadataParameter: IAE_METADATA_PARAMETER,
  audiencePrefix: IAE_AUDIENCE_PREFIX,
  responseModes: IAE_RESPONSE_MODES,
  interactionTypes: IAE_INTERACTION_TYPES,
  authSessionScope: 'iae:',
  parseInitial: parseIaeInitialRequest,
  // §"Interactive Authorization Response": always 200 with `status`.
  answer(outcome) {
    if (outcome.kind === 'code') return { status: 200, body: iaeCodeResponse(outcome.code) }
    if (outcome.kind === 'presentation')
      return {
        status: 200,
        body: iaePresentationRequired(outcome.type, outcome.authSession, outcome.openid4vpRequest),
      }
    return {
      status: 200,
      body: iaeWebRequired(outcome.type, outcome.authSession, outcome.requestUri, outcome.expiresIn),
    }
  },
}

/**
 * The interaction this server requires, of those the wallet supports, with the name the wallet gave
 * it: the first of the login's `interactions` (its kind's, preferred first: a presentation provider
 * inline, else on the web; an upstream OpenID login only on the web) the wallet names.
 * Undefined: `missing_interaction_type`.
 */
export function chooseFormInteraction(
  form: IaWireForm,
  interactions: readonly InteractionType[],
  supported: readonly string[],
): { kind: InteractionType; type: string } | undefined {
  for (const kind of interactions) {
    const type = form.interactionTypes[kind].find((name) => supported.includes(name))
    if (type) return { kind, type }
  }
  return undefined
}

export const missingFormInteraction = (form: IaWireForm, needed: readonly InteractionType[]) =>
  new ProtocolError(
    IA_ERRORS.missingInteractionType,
    `interaction_types_supported in the request is missing the required interaction type ${needed
      .map((kind) => `'${form.interactionTypes[kind][0]}'`)
      .join(' or ')}`,
  )

/**
 * The KB-JWT audiences (dc+sd-jwt binding) accepted at an endpoint: the prefix and the endpoint's
 * derived origin, as the dc+sd-jwt binding text says, or the prefix and the endpoint URL, as the
 * current draft's own example and its jwt_vc_json binding write it (and deployed wallets send).
 */
export const iaAudiences = (form: IaWireForm, endpoint: string) => [
  `${form.audiencePrefix}${iaOrigin(endpoint)}`,
  `${form.audiencePrefix}${endpoint}`,
]
