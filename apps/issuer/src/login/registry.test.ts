import { LOGIN_PROVIDER_KINDS } from '@credential-service/core-domain'
import type { LoginProviderRow } from '@credential-service/db-schema'
import { describe, expect, it } from 'vitest'
import { loginKindOf, loginKinds } from './registry'

const provider = (kind: string): LoginProviderRow => ({
  tenantId: 't',
  id: 'login',
  description: null,
  kind,
  issuer: kind === 'openid' ? 'https://idp.example' : null,
  clientId: kind === 'openid' ? 'issuer' : null,
  clientSecretEncrypted: null,
  scopes: ['openid'],
  presentationConfigId: kind === 'presentation' ? 'pid-login' : null,
  createdAt: new Date(0),
  updatedAt: new Date(0),
})

describe('issue 38: the login kind registry', () => {
  it('every login provider kind has its login kind, registered under its own name', () => {
    expect(Object.keys(loginKinds).sort()).toStrictEqual([...LOGIN_PROVIDER_KINDS].sort())
    for (const [name, kind] of Object.entries(loginKinds)) expect(kind.kind).toBe(name)
  })

  it('a provider row gets the login kind of its `kind`', () => {
    expect(loginKindOf(provider('openid'))).toBe(loginKinds.openid)
    expect(loginKindOf(provider('presentation'))).toBe(loginKinds.presentation)
  })

  it('OpenID4VCI 1.1 §"Require Presentation", §"Authorization via Web": a presentation login is asked for inline first, then on the web; an upstream OpenID login only on the web', () => {
    expect(loginKinds.presentation.interactions).toStrictEqual(['presentation', 'web'])
    expect(loginKinds.openid.interactions).toStrictEqual(['web'])
  })
})
