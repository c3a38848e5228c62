import { describe, expect, it } from 'vitest'
import { refusalOf } from '../../test/refusal'
import {
  INTERACTION_TYPES,
  parseIaInitialRequest,
  parseIaPresentationRequest,
  presentationRequired,
  webRequired,
} from './interactive-authorization'
import { chooseFormInteraction, IA_FORM, iaAudiences } from './interactive-authorization-forms'

const PRESENTATION = 'urn:openid:dcp:ia:openid4vp_presentation'
const WEB = 'urn:openid:dcp:ia:auth_via_web'
// OpenID4VCI 1.1 §"Initial Request" example, without the redirect_uri it makes optional.
const initial = {
  response_type: 'code',
  client_id: 'CLIENT1234',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  scope: 'mdl',
  interaction_types_supported: `${PRESENTATION},${WEB}`,
}

describe('issue 26: Interactive Authorization wire details (OpenID4VCI 1.1 working copy 2d9fd4a, FiPA -03)', () => {
  it('§"Initial Request": the PAR parameters with redirect_uri optional; interaction_types_supported is a comma-separated list of URNs, order not significant', () => {
    const parsed = parseIaInitialRequest({
      ...initial,
      interaction_types_supported: ` ${WEB} , ${PRESENTATION},${WEB}`,
    })
    expect(parsed.interaction_types_supported).toStrictEqual([WEB, PRESENTATION])
    expect(parsed.redirect_uri).toBeUndefined()
    expect(
      parseIaInitialRequest({ ...initial, redirect_uri: 'https://client.example.org/cb' }).redirect_uri,
    ).toBe('https://client.example.org/cb')
  })

  it('§"Initial Request": refusals name the problem; without interaction_types_supported a FiPA-only client is told redirect_to_web (FiPA §5.2.2.1.1)', () => {
    const refusal = refusalOf(parseIaInitialRequest)
    const { interaction_types_supported: _, ...plain } = initial
    expect(refusal(plain)).toMatchObject({ code: 'redirect_to_web' })
    expect(refusal({ ...initial, interaction_types_supported: 'openid4vp_presentation' })).toMatchObject({
      code: 'invalid_request',
      detail: 'interaction_types_supported must be a comma-separated list of URNs',
    })
    expect(refusal({ ...initial, redirect_uri: 'http://evil.example/cb' })).toMatchObject({
      code: 'invalid_request',
    })
    expect(refusal({ ...initial, code_challenge_method: 'plain' })).toMatchObject({ code: 'invalid_request' })
    expect(refusal({ ...initial, request: 'eyJ...' })).toMatchObject({ code: 'invalid_request' })
  })

  it('§"Require Presentation": the follow-up has auth_session and a JSON-object openid4vp_response', () => {
    expect(
      parseIaPresentationRequest({ auth_session: 's', openid4vp_response: '{"vp_token":{"pid":["x"]}}' }),
    ).toStrictEqual({ auth_session: 's', openid4vp_response: { vp_token: { pid: ['x'] } } })
    const refusal = refusalOf(parseIaPresentationRequest)
    expect(refusal({ auth_session: 's', openid4vp_response: '[1]' })).toMatchObject({
      code: 'invalid_request',
    })
    expect(refusal({ auth_session: 's', openid4vp_response: 'not json' })).toMatchObject({
      code: 'invalid_request',
    })
    expect(refusal({ auth_session: 's' })).toMatchObject({ code: 'invalid_request' })
  })

  it('§"Require Presentation", §"Authorization via Web": which interaction; none is missing_interaction_type', () => {
    // The interactions of the issuer's login kinds (apps/issuer/src/login/registry.ts), preferred first.
    const interactions = { presentation: ['presentation', 'web'], openid: ['web'] } as const
    const kind = (login: 'presentation' | 'openid', supported: string[]) =>
      chooseFormInteraction(IA_FORM, interactions[login], supported)?.kind
    expect(kind('presentation', [WEB, PRESENTATION])).toBe('presentation')
    expect(kind('presentation', [WEB])).toBe('web')
    expect(kind('openid', [PRESENTATION, WEB])).toBe('web')
    expect(kind('openid', [PRESENTATION])).toBeUndefined()
    expect(kind('presentation', ['urn:example:other'])).toBeUndefined()
  })

  it('§"Interactive Authorization Binding", response modes and the 401 bodies', () => {
    expect(iaAudiences(IA_FORM, 'https://issuer.example/issuers/t/authorize-challenge')).toContain(
      'ia:https://issuer.example',
    )
    expect(IA_FORM.responseModes).toStrictEqual({ direct_post: 'ia_post', 'direct_post.jwt': 'ia_post.jwt' })
    expect(presentationRequired('s', { request: 'jws' })).toStrictEqual({
      error: 'insufficient_authorization',
      interaction_type_required: INTERACTION_TYPES.presentation,
      auth_session: 's',
      openid4vp_request: { request: 'jws' },
    })
    expect(webRequired('s', 'urn:ietf:params:oauth:request_uri:x', 60)).toStrictEqual({
      error: 'insufficient_authorization',
      interaction_type_required: INTERACTION_TYPES.web,
      auth_session: 's',
      request_uri: 'urn:ietf:params:oauth:request_uri:x',
      expires_in: 60,
    })
  })
})
