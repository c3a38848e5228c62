import { deriveManagementSigningKey } from '@credential-service/crypto'
import Fastify from 'fastify'
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { registerManagementTokens } from './management-token'

const issuer = 'https://service.example/api'
const secret = 'management-token-test-secret-0123456789'

describe('management access tokens (@fastify/jwt)', () => {
  it('spec §5 rule 1: a verified token is remembered until its exp, then refused; a forged one never passes', async () => {
    let clock = Date.parse('2026-11-23T10:00:00Z')
    const now = () => new Date(clock)
    const key = await deriveManagementSigningKey(secret)
    const { issue, verify } = await registerManagementTokens(Fastify(), {
      key,
      issuer,
      lifetimeSeconds: 60,
      now,
    })
    const { accessToken, expiresIn } = await issue({
      clientId: 'c1',
      tenantId: 't1',
      tenantGeneration: 'g1',
      roles: ['issuance:offer'],
    })
    expect(expiresIn).toBe(60)
    expect(decodeProtectedHeader(accessToken)).toStrictEqual({
      alg: 'EdDSA',
      typ: 'at+jwt',
      kid: key.publicJwk.kid,
    })
    const iat = clock / 1000
    expect(decodeJwt(accessToken)).toStrictEqual({
      client_id: 'c1',
      roles: ['issuance:offer'],
      tenant_generation: 'g1',
      sub: 't1',
      iat,
      jti: expect.any(String),
      exp: iat + 60,
      iss: issuer,
      aud: issuer,
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
    const foreign = await registerManagementTokens(Fastify(), {
      key: other,
      issuer,
      lifetimeSeconds: 60,
      now,
    })
    await expect(
      verify(
        (await foreign.issue({ clientId: 'c1', tenantId: 't1', tenantGeneration: 'g1', roles: [] }))
          .accessToken,
      ),
    ).rejects.toThrow()
  })

  it('checklist S-108: a tenant token carries its tenant generation; one without it is refused', async () => {
    const key = await deriveManagementSigningKey(secret)
    const { issue, verify } = await registerManagementTokens(Fastify(), { key, issuer, lifetimeSeconds: 60 })
    const bound = await issue({ clientId: 'c1', tenantId: 't1', tenantGeneration: 'g1', roles: [] })
    expect(decodeJwt(bound.accessToken)).toMatchObject({ sub: 't1', tenant_generation: 'g1' })

    const unbound = await issue({ clientId: 'c1', tenantId: 't1', roles: [] })
    await expect(verify(unbound.accessToken)).rejects.toMatchObject({
      code: 'unauthenticated',
      invalidToken: true,
    })
    const operator = await issue({ clientId: 'root', tenantId: undefined, roles: ['tenant:manage'] })
    expect(decodeJwt(operator.accessToken).tenant_generation).toBeUndefined()
    expect(decodeJwt(operator.accessToken).sub).toBeUndefined()
    expect(await verify(operator.accessToken)).toStrictEqual({
      clientId: 'root',
      tenantId: undefined,
      roles: ['tenant:manage'],
    })
  })

  it('spec §5 rule 1: the same key signing another typ, issuer or audience does not make a management token', async () => {
    const key = await deriveManagementSigningKey(secret)
    const { verify } = await registerManagementTokens(Fastify(), { key, issuer })
    const iat = Math.floor(Date.now() / 1000)
    const sign = (typ: string, iss: string, aud: string) =>
      new SignJWT({ client_id: 'c1', roles: [], jti: 'j1' })
        .setProtectedHeader({ alg: 'EdDSA', typ, kid: key.publicJwk.kid })
        .setIssuer(iss)
        .setAudience(aud)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 60)
        .sign(key.privateKey)
    expect(await verify(await sign('at+jwt', issuer, issuer))).toMatchObject({ clientId: 'c1' })
    for (const token of [
      await sign('JWT', issuer, issuer),
      await sign('at+jwt', 'https://other.example/api', issuer),
      await sign('at+jwt', issuer, 'https://other.example/api'),
    ]) {
      await expect(verify(token)).rejects.toMatchObject({ code: 'unauthenticated', invalidToken: true })
    }
  })
})
