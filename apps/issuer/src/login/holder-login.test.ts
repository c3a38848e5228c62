import type { ClaimField } from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { openIdHolder } from './openid'
import { presentedHolder } from './presentation'

const fields: ClaimField[] = [
  { path: ['given_name'], type: 'string' },
  { path: ['address', 'locality'], type: 'string' },
  { path: ['family_name'], type: 'string' },
]

describe('issue 38: what each login kind tells of the holder (HolderLogin)', () => {
  it('openid: each mapped field gets the user claim it names, nested paths too; the attribute provider is told the user without the ID token protocol claims (OIDC Core §2)', () => {
    const login = openIdHolder({
      issuer: 'https://idp.example',
      sub: 'u1',
      claims: { iss: 'https://idp.example', sub: 'u1', nonce: 'n', given_name: 'Erika', town: 'Berlin' },
    })
    const mapping = { given_name: 'given_name', 'address.locality': 'town', family_name: 'family_name' }
    expect(
      login.mappedClaims({ fields, userAuthentication: { loginProviderId: 'idp', claims: mapping } }),
    ).toStrictEqual({
      given_name: 'Erika',
      address: { locality: 'Berlin' },
    })
    expect(login.mappedClaims({ fields, userAuthentication: undefined })).toStrictEqual({})
    expect(login.holder).toStrictEqual({
      user: { issuer: 'https://idp.example', sub: 'u1', claims: { given_name: 'Erika', town: 'Berlin' } },
    })
  })

  it('presentation: each mapped field gets the presented claim its claims path selects (OpenID4VP 1.0 §7.1); the attribute provider is told the presentation', () => {
    const presented = { pid: [{ given_name: 'Erika', address: { locality: 'Berlin' } }] }
    const login = presentedHolder('pid-login', presented)
    const mapping = { given_name: ['given_name'], 'address.locality': ['address', 'locality'] }
    expect(
      login.mappedClaims({ fields, userAuthentication: { loginProviderId: 'pid', claims: mapping } }),
    ).toStrictEqual({
      given_name: 'Erika',
      address: { locality: 'Berlin' },
    })
    expect(login.holder).toStrictEqual({
      presentation: { presentationConfigId: 'pid-login', credentials: presented },
    })
  })
})
