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
    const { accessToken } = await issue({ clientId: 'c1', tenantId: 't1', roles: ['issuance:offer'] })

    const principal = { clientId: 'c1', tenantId: 't1', roles: ['issuance:offer'] }
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
      verify((await foreign({ clientId: 'c1', tenantId: 't1', roles: [] })).accessToken),
    ).rejects.toThrow()
  })
})
