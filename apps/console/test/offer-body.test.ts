import type { ClaimField } from '@credential-service/core-domain'
import { ManagementApiError } from '@credential-service/sdk'
import { describe, expect, it } from 'vitest'
import { newFieldRow } from '../src/credential-configs/config-values'
import { claimInputsFromFields } from '../src/flows/claims-form'
import {
  configsWithoutClaims,
  initialOfferValues,
  offerBody,
  offerProblemErrors,
} from '../src/flows/offer-body'

const FIELDS: ClaimField[] = [
  { path: ['given_name'], type: 'string', mandatory: true },
  { path: ['age_over_18'], type: 'boolean' },
]
const configs = { 'eu.pid': { inputs: claimInputsFromFields(FIELDS), fields: FIELDS } }

describe('the offer form’s body', () => {
  it('OpenID4VCI §4.1.1: claims per configuration, tx_code spec only when asked for, empty members left out', () => {
    const values = { ...initialOfferValues(), credentialConfigurationIds: ['eu.pid'] }
    values.txCode = { required: true, inputMode: 'numeric', length: 6, description: '', value: '' }
    expect(
      offerBody(values, { 'eu.pid': { kind: 'form', texts: ['Erika', 'true'] } }, configs),
    ).toStrictEqual({
      body: {
        credentialConfigurationIds: ['eu.pid'],
        grant: 'pre-authorized_code',
        lifetimeSeconds: 600,
        byReference: true,
        txCode: { inputMode: 'numeric', length: 6 },
        claims: { 'eu.pid': { given_name: 'Erika', age_over_18: true } },
      },
      claimErrors: {},
    })
  })

  it('issue 42 item 3: a configuration the form gives no claim for is named before the offer goes', () => {
    const optional: ClaimField[] = [{ path: ['age_over_18'], type: 'boolean' }]
    const both = {
      ...configs,
      'eu.age': { inputs: claimInputsFromFields(optional), fields: optional },
      'eu.login': { inputs: [], fields: [] },
    }
    const values = { ...initialOfferValues(), credentialConfigurationIds: ['eu.pid', 'eu.age', 'eu.login'] }
    const sources = {
      'eu.pid': { kind: 'form' as const, texts: ['Erika', ''] },
      'eu.age': { kind: 'form' as const, texts: [''] },
      // Claims from the login or the attribute provider: none expected in the offer.
      'eu.login': { kind: 'none' as const },
    }
    const { body } = offerBody(values, sources, both)
    expect(configsWithoutClaims(body, sources)).toStrictEqual(['eu.age'])
    sources['eu.age'].texts = ['true']
    expect(configsWithoutClaims(offerBody(values, sources, both).body, sources)).toStrictEqual([])
  })

  it('issue 42 item 3: a field added in the editor is mandatory by default', () => {
    expect(newFieldRow().mandatory).toBe(true)
  })

  it('OpenID4VCI §4.1.1: no tx_code with the authorization code grant alone', () => {
    const values = {
      ...initialOfferValues(),
      credentialConfigurationIds: ['eu.pid'],
      grant: 'authorization_code' as const,
    }
    values.txCode = { required: true, inputMode: 'text', length: 8, description: '', value: '' }
    expect(offerBody(values, { 'eu.pid': { kind: 'none' } }, configs).body).not.toHaveProperty('txCode')
  })

  it('claims from the attribute provider or the login: none in the body', () => {
    const values = {
      ...initialOfferValues(),
      credentialConfigurationIds: ['eu.pid'],
      statusHandle: ' case-7 ',
    }
    expect(offerBody(values, { 'eu.pid': { kind: 'none' } }, configs).body).toStrictEqual({
      credentialConfigurationIds: ['eu.pid'],
      grant: 'pre-authorized_code',
      lifetimeSeconds: 600,
      byReference: true,
      statusHandle: 'case-7',
    })
  })

  it('a mandatory claim left empty is an error on its input before anything is sent', () => {
    const values = { ...initialOfferValues(), credentialConfigurationIds: ['eu.pid'] }
    expect(
      offerBody(values, { 'eu.pid': { kind: 'form', texts: ['', ''] } }, configs).claimErrors,
    ).toStrictEqual({
      'eu.pid': { 0: 'Required by the configuration' },
    })
  })
})

describe('an API refusal on the offer form', () => {
  const refusal = (errors: { path: string; message: string }[]) =>
    new ManagementApiError('validation', {
      method: 'POST',
      url: '/api/offers',
      status: 422,
      problem: {
        type: 'about:blank',
        title: 'Invalid input',
        status: 422,
        code: 'invalid_input',
        detail: 'The offer is invalid',
        errors,
      },
    })

  it('RFC 9457 errors[]: claims paths on their claims input, others on their fields', () => {
    const error = refusal([
      { path: 'body.claims.eu.pid.age_over_18', message: 'Expected boolean' },
      { path: 'body.txCode', message: 'needs grant pre-authorized_code' },
      { path: 'body.claims.eu.pid', message: 'claims are not allowed for this configuration' },
    ])
    expect(offerProblemErrors(error, configs)).toStrictEqual({
      form: { txCode: 'needs grant pre-authorized_code' },
      claims: { 'eu.pid': { 1: 'Expected boolean', [-1]: 'claims are not allowed for this configuration' } },
    })
  })

  it('a problem no field explains is the form’s message', () => {
    const error = refusal([{ path: 'body.other', message: 'unknown' }])
    expect(offerProblemErrors(error, configs).form).toStrictEqual({
      '': 'The offer is invalid body.other: unknown',
    })
  })
})
