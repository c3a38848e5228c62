import { describe, expect, it } from 'vitest'
import { refusalOf } from '../../test/refusal'
import {
  chooseFormInteraction,
  IA_FORM,
  IAE_FORM,
  iaAudiences,
  missingFormInteraction,
} from './interactive-authorization-forms'

// The earlier IAE form's Initial Request example (openid/OpenID4VCI 4ef9f26), without redirect_uri.
const initial = {
  response_type: 'code',
  client_id: 'CLIENT1234',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  scope: 'mdl',
  interaction_types_supported: 'urn:openid:dcp:iae:openid4vp_presentation,urn:openid:dcp:iae:redirect_to_web',
}

describe('issue 37, V-36: the two wire forms of Interactive Authorization', () => {
  it('IAE §"Initial Request": the URN names and the plain names deployed wallets send are both read; "`interaction_types_supported`: REQUIRED", so without it the request is malformed (no FiPA redirect_to_web)', () => {
    expect(IAE_FORM.parseInitial(initial).interaction_types_supported).toStrictEqual([
      'urn:openid:dcp:iae:openid4vp_presentation',
      'urn:openid:dcp:iae:redirect_to_web',
    ])
    expect(
      IAE_FORM.parseInitial({ ...initial, interaction_types_supported: 'openid4vp_presentation' })
        .interaction_types_supported,
    ).toStrictEqual(['openid4vp_presentation'])
    const refusal = refusalOf(IAE_FORM.parseInitial)
    const { interaction_types_supported: _, ...plain } = initial
    expect(refusal(plain)).toMatchObject({
      code: 'invalid_request',
      detail: 'interaction_types_supported is required',
    })
    expect(refusal({ ...initial, interaction_types_supported: 'a b' })).toMatchObject({
      code: 'invalid_request',
    })
    expect(refusalOf(IA_FORM.parseInitial)(plain)).toMatchObject({ code: 'redirect_to_web' })
  })

  it('IAE §"Interaction Required Response": the answer names the interaction as the wallet did ("MUST NOT set this to a value that was not included"); the FiPA form only knows its own URNs', () => {
    expect(
      chooseFormInteraction(IAE_FORM, ['presentation', 'web'], ['redirect_to_web', 'openid4vp_presentation']),
    ).toStrictEqual({ kind: 'presentation', type: 'openid4vp_presentation' })
    expect(chooseFormInteraction(IAE_FORM, ['web'], ['urn:openid:dcp:iae:redirect_to_web'])).toStrictEqual({
      kind: 'web',
      type: 'urn:openid:dcp:iae:redirect_to_web',
    })
    expect(
      chooseFormInteraction(IAE_FORM, ['presentation', 'web'], ['urn:openid:dcp:ia:openid4vp_presentation']),
    ).toBe(undefined)
    expect(chooseFormInteraction(IA_FORM, ['presentation', 'web'], ['openid4vp_presentation'])).toBe(
      undefined,
    )
    // An upstream OpenID login is only on the web, whatever else the wallet supports.
    expect(chooseFormInteraction(IAE_FORM, ['web'], ['openid4vp_presentation'])).toBe(undefined)
    expect(missingFormInteraction(IAE_FORM, ['presentation']).message).toContain(
      "'urn:openid:dcp:iae:openid4vp_presentation'",
    )
  })

  it('IAE §"Authorization Code Response", §"Require Presentation": 200 with `status`; the FiPA form answers 401 insufficient_authorization and 200 authorization_code (FiPA §5.2)', () => {
    const request = { response_mode: 'iae_post' }
    expect(IAE_FORM.answer({ kind: 'code', code: 'c' })).toStrictEqual({
      status: 200,
      body: { status: 'ok', code: 'c' },
    })
    expect(
      IAE_FORM.answer({
        kind: 'presentation',
        type: 'openid4vp_presentation',
        authSession: 's',
        openid4vpRequest: request,
      }),
    ).toStrictEqual({
      status: 200,
      body: {
        status: 'require_interaction',
        type: 'openid4vp_presentation',
        auth_session: 's',
        openid4vp_request: request,
      },
    })
    expect(IA_FORM.answer({ kind: 'code', code: 'c' })).toStrictEqual({
      status: 200,
      body: { authorization_code: 'c' },
    })
    expect(
      IA_FORM.answer({ kind: 'presentation', type: 'x', authSession: 's', openid4vpRequest: request }).status,
    ).toBe(401)
    expect(IAE_FORM.responseModes).toStrictEqual({
      direct_post: 'iae_post',
      'direct_post.jwt': 'iae_post.jwt',
    })
  })

  it('dc+sd-jwt binding: the origin form the text names and the endpoint URL form of the example, each with its form’s prefix', () => {
    expect(iaAudiences(IAE_FORM, 'https://as.example/issuers/t/interactive-authorization')).toStrictEqual([
      'iae:https://as.example',
      'iae:https://as.example/issuers/t/interactive-authorization',
    ])
    expect(iaAudiences(IA_FORM, 'https://as.example/issuers/t/authorize-challenge')).toStrictEqual([
      'ia:https://as.example',
      'ia:https://as.example/issuers/t/authorize-challenge',
    ])
  })
})
