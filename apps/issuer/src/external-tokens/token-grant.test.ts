import type { CredentialConfig } from '@credential-service/core-domain'
import type { AuthServerRow } from '@credential-service/db-schema'
import { describe, expect, it } from 'vitest'
import { subjectClaims, tokenAuthorisation } from './token-grant'

const server = (mapping: string[], credentialConfigurationIds = ['pid', 'mdl']) =>
  ({ id: 'as', issuer: 'https://as.example', mapping, credentialConfigurationIds }) as AuthServerRow
const config = (id: string, scope?: string) =>
  ({ id, config: { format: 'dc+sd-jwt', vct: `urn:${id}`, ...(scope ? { scope } : {}) } }) as CredentialConfig
const configs = [config('pid', 'eu.pid'), config('mdl'), config('badge', 'badge')]

describe('issue 41: what an external token authorises (OpenID4VCI 1.0 §5.1.1, §5.1.2)', () => {
  it('§5.1.1: authorization_details of type openid_credential name configurations, with the credential_identifiers the server gave', () => {
    const claims = {
      authorization_details: [
        {
          type: 'openid_credential',
          credential_configuration_id: 'pid',
          credential_identifiers: ['pid-1', 'pid-2'],
        },
        { type: 'payment_initiation', credential_configuration_id: 'mdl' },
        { type: 'openid_credential', credential_configuration_id: 'badge' },
      ],
    }
    expect(tokenAuthorisation(server(['authorization_details', 'scope']), claims, configs)).toStrictEqual({
      configurationIds: ['pid'],
      credentialIdentifiers: { 'pid-1': 'pid', 'pid-2': 'pid' },
    })
  })

  it('§5.1.2: scopes name configurations by config.scope (the id without one); unknown scopes and configurations the server may not authorise are left out', () => {
    const claims = { scope: 'openid eu.pid mdl badge unknown' }
    expect(tokenAuthorisation(server(['scope']), claims, configs)).toStrictEqual({
      configurationIds: ['pid', 'mdl'],
    })
  })

  it('the mapping decides what counts: with scope only, authorization_details name nothing, and the other way round', () => {
    const claims = {
      scope: 'mdl',
      authorization_details: [{ type: 'openid_credential', credential_configuration_id: 'pid' }],
    }
    expect(tokenAuthorisation(server(['scope']), claims, configs)).toStrictEqual({
      configurationIds: ['mdl'],
    })
    expect(tokenAuthorisation(server(['authorization_details']), claims, configs)).toStrictEqual({
      configurationIds: ['pid'],
    })
  })

  it('the subject’s claims leave out the token’s own members (iss, aud, cnf, issuer_state, …)', () => {
    expect(
      subjectClaims({
        iss: 'x',
        sub: 'alice',
        aud: 'y',
        exp: 1,
        cnf: { jkt: 'k' },
        issuer_state: 's',
        given_name: 'A',
      }),
    ).toStrictEqual({ given_name: 'A' })
  })
})
