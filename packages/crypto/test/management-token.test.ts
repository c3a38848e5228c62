import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import {
  createManagementTokenIssuer,
  createManagementTokenVerifier,
  deriveManagementSigningKey,
} from '../src'

const issuer = 'https://service.example/api'

describe('management access tokens', () => {
  it('spec §5 rule 1: a verified token is remembered until its exp, then refused; a forged one never passes', async () => {
    let clock = Date.parse('2026-11-23T10:00:00Z')
    const now = () => new Date(clock)
    const key = await deriveManagementSigningKey('management-token-test-secret-0123456789')
    const issue = createManagementTokenIssuer({ key, issuer, lifetimeSeconds: 60, now })
    const verify = createManagementTokenVerifier({ jwks: { keys: [key.publicJwk] }, issuer, now })
    const { accessToken } = await issue({
      clientId: 'c1',
      tenantId: 't1',
      tenantGeneration: 'g1',
      roles: ['issuance:offer'],
    })

    const principal = { clientId: 'c1', tenantId: 't1', tenantGeneration: 'g1', roles: ['issuance:offer'] }
    expect(await verify(accessToken)).toStrictEqual(principal)
    expect(await verify(accessToken), 'the second call is answered from memory').toStrictEqual(principal)
    await expect(verify(`${accessToken.slice(0, -4)}AAAA`)).rejects.toThrow('invalid or expired')

    clock += 59_000
    expect(await verify(accessToken)).toStrictEqual(principal)
    clock += 1_000
    await expect(verify(accessToken), 'remembered tokens expire like any other').rejects.toThrow(
      'invalid or expired',
    )
    const other = await deriveManagementSigningKey('another-management-secret-0123456789')
    const foreign = createManagementTokenIssuer({ key: other, issuer, lifetimeSeconds: 60, now })
    await expect(
      verify(
        (await foreign({ clientId: 'c1', tenantId: 't1', tenantGeneration: 'g1', roles: [] })).accessToken,
      ),
    ).rejects.toThrow()
  })

  it('checklist S-108: a tenant token carries its tenant generation; one without it is refused', async () => {
    const key = await deriveManagementSigningKey('management-token-test-secret-0123456789')
    const issue = createManagementTokenIssuer({ key, issuer, lifetimeSeconds: 60 })
    const verify = createManagementTokenVerifier({ jwks: { keys: [key.publicJwk] }, issuer })
    const bound = await issue({ clientId: 'c1', tenantId: 't1', tenantGeneration: 'g1', roles: [] })
    expect(decodeJwt(bound.accessToken)).toMatchObject({ sub: 't1', tenant_generation: 'g1' })

    const unbound = await issue({ clientId: 'c1', tenantId: 't1', roles: [] })
    await expect(verify(unbound.accessToken)).rejects.toMatchObject({
      code: 'unauthenticated',
      invalidToken: true,
    })
    const operator = await issue({ clientId: 'root', tenantId: undefined, roles: ['tenant:manage'] })
    expect(decodeJwt(operator.accessToken).tenant_generation).toBeUndefined()
    expect(await verify(operator.accessToken)).toStrictEqual({
      clientId: 'root',
      tenantId: undefined,
      roles: ['tenant:manage'],
    })
  })
})
