import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const provider = (id: string) => ({
  id,
  issuer: 'https://login.example.com/realms/holders',
  clientId: 'issuer',
  clientSecret: 'a-client-secret-value',
  scopes: ['profile'],
})

const staff = (id: string, keyChainId: string, loginProviderId: string, claims: Record<string, string>) => ({
  id,
  config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
  keyChainId,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
  userAuthentication: { loginProviderId, claims },
})

describe.each(testDatabases())('login providers (OpenID4VCI §5 holder login) on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  let keyChainId: string

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    admin = await h.createClient(h.tenantA, ['issuance:config', 'key:manage', 'presentation:config'])
    keyChainId = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: admin.auth,
        payload: { source: 'generate' },
      })
    ).json().id
  })
  afterAll(() => h.close())

  const send = (method: 'POST' | 'PUT', url: string, payload: unknown, client = admin) =>
    h.app.inject({ method, url, headers: client.auth, payload: payload as object })

  /** The stored client secret, decrypted as the issuer reads it (null for a public client). */
  async function storedSecret(tenantId: string, id: string): Promise<string | null> {
    const [row] = await queryRows<{ client_secret_encrypted: string | null }>(
      h.database.db,
      sql`select client_secret_encrypted from login_providers where tenant_id = ${tenantId} and id = ${id}`,
    )
    if (!row?.client_secret_encrypted) return null
    return h.keys.cipher.decrypt(row.client_secret_encrypted, `login-provider:${tenantId}/${id}`)
  }

  it('happy: the client secret is stored encrypted and never returned; a replace with the same issuer and clientId keeps it', async () => {
    const id = random('idp')
    const created = await send('POST', `/api/tenants/${h.tenantA}/login-providers`, provider(id))
    expect(created.statusCode).toBe(201)
    expect(created.json()).toStrictEqual({
      id,
      description: null,
      kind: 'openid',
      issuer: 'https://login.example.com/realms/holders',
      clientId: 'issuer',
      presentationConfigId: null,
      scopes: ['profile'],
      hasClientSecret: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    const { clientSecret: _s, ...withoutSecret } = provider(id)
    const replaced = await send('PUT', `/api/login-providers/${id}`, {
      ...withoutSecret,
      scopes: ['profile', 'email'],
    })
    expect(replaced.statusCode).toBe(200)
    expect(replaced.json()).toMatchObject({ hasClientSecret: true, scopes: ['profile', 'email'] })
    expect(await storedSecret(h.tenantA, id)).toBe('a-client-secret-value')
    expect(
      JSON.stringify((await h.app.inject({ url: '/api/login-providers', headers: admin.auth })).json()),
    ).not.toContain('a-client-secret-value')
  })

  it('security: a replace that changes issuer or clientId without a clientSecret is a 422 naming body.clientSecret; the stored secret is never kept for another provider', async () => {
    const id = random('idp')
    await send('POST', '/api/login-providers', provider(id))
    const { clientSecret: _s, ...withoutSecret } = provider(id)
    for (const change of [{ issuer: 'https://attacker.example.com' }, { clientId: 'someone-else' }]) {
      const refused = await send('PUT', `/api/login-providers/${id}`, { ...withoutSecret, ...change })
      expect(refused.statusCode, JSON.stringify(change)).toBe(422)
      expect(refused.headers['content-type']).toContain('application/problem+json')
      expect(refused.json()).toMatchObject({
        code: 'rule_violation',
        errors: [
          { path: 'body.clientSecret', message: expect.stringContaining('issuer or clientId changed') },
        ],
      })
    }
    // Nothing was written.
    const unchanged = (await h.app.inject({ url: `/api/login-providers/${id}`, headers: admin.auth })).json()
    expect(unchanged).toMatchObject({
      issuer: provider(id).issuer,
      clientId: 'issuer',
      hasClientSecret: true,
    })
    expect(await storedSecret(h.tenantA, id)).toBe('a-client-secret-value')

    // With a new secret the change goes through, and only the new secret is stored.
    const moved = await send('PUT', `/api/login-providers/${id}`, {
      ...withoutSecret,
      issuer: 'https://login.other.example.com',
      clientSecret: 'the-new-provider-secret',
    })
    expect(moved.statusCode).toBe(200)
    expect(await storedSecret(h.tenantA, id)).toBe('the-new-provider-secret')
  })

  it('happy: clientSecret null removes the stored secret (a public client), also with a new issuer', async () => {
    const id = random('idp')
    await send('POST', '/api/login-providers', provider(id))
    const cleared = await send('PUT', `/api/login-providers/${id}`, {
      ...provider(id),
      issuer: 'https://login.public.example.com',
      clientSecret: null,
    })
    expect(cleared.statusCode).toBe(200)
    expect(cleared.json().hasClientSecret).toBe(false)
    expect(await storedSecret(h.tenantA, id)).toBeNull()
    // A public client has no secret to leak: leaving clientSecret out keeps it public.
    const { clientSecret: _s, ...withoutSecret } = provider(id)
    const moved = await send('PUT', `/api/login-providers/${id}`, {
      ...withoutSecret,
      issuer: 'https://login.elsewhere.example.com',
    })
    expect(moved.statusCode).toBe(200)
    expect(moved.json().hasClientSecret).toBe(false)
  })

  it('happy: a credential configuration names its login provider and claim mapping', async () => {
    const idp = random('idp')
    await send('POST', '/api/login-providers', provider(idp))
    const id = random('staff')
    const created = await send(
      'POST',
      '/api/credentials',
      staff(id, keyChainId, idp, { given_name: 'given_name' }),
    )
    expect(created.statusCode).toBe(201)
    expect(created.json().userAuthentication).toStrictEqual({
      loginProviderId: idp,
      claims: { given_name: 'given_name' },
    })
    // A referenced login provider cannot be deleted.
    const deleted = await h.app.inject({
      method: 'DELETE',
      url: `/api/login-providers/${idp}`,
      headers: admin.auth,
    })
    expect(deleted.statusCode).toBe(409)
  })

  it('error: an unknown login provider or a claim mapping key that is no field path is a 422 naming the field', async () => {
    const idp = random('idp')
    await send('POST', '/api/login-providers', provider(idp))
    const missing = await send('POST', '/api/credentials', staff(random('s'), keyChainId, 'nope', {}))
    expect(missing.statusCode).toBe(422)
    expect(missing.json().errors.map((e: { path: string }) => e.path)).toContain(
      'body.userAuthentication.loginProviderId',
    )
    const typo = await send(
      'POST',
      '/api/credentials',
      staff(random('s'), keyChainId, idp, { givenname: 'given_name' }),
    )
    expect(typo.statusCode).toBe(422)
    expect(typo.json().errors.map((e: { path: string }) => e.path)).toContain(
      'body.userAuthentication.claims.givenname',
    )
    const internalId = random('idp')
    const internal = await send('POST', '/api/login-providers', {
      ...provider(internalId),
      issuer: 'https://10.0.0.1/',
    })
    expect(internal.statusCode).toBe(422)
    expect(internal.json().errors).toStrictEqual([
      { path: 'body.issuer', message: expect.stringContaining('10.0.0.1') },
    ])
    expect(
      (await h.app.inject({ url: `/api/login-providers/${internalId}`, headers: admin.auth })).statusCode,
    ).toBe(404)
  })

  describe('issue 26: kind presentation (presentation during issuance)', () => {
    const PID_VCT = 'urn:eudi:pid:1'
    /** A presentation configuration asking for a PID's family_name and birthdate. */
    async function pidPresentation() {
      const id = random('pid')
      const response = await send('POST', '/api/presentations', {
        id,
        keyChainId,
        dcqlQuery: {
          credentials: [
            {
              id: 'pid',
              format: 'dc+sd-jwt',
              meta: { vct_values: [PID_VCT] },
              claims: [{ path: ['family_name'] }, { path: ['birthdate'] }, { path: ['address'] }],
            },
          ],
        },
      })
      expect(response.statusCode).toBe(201)
      return id
    }
    const badge = (id: string, loginProviderId: string, claims: Record<string, unknown>) => ({
      id,
      config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
      keyChainId,
      fields: [
        { path: ['family_name'], type: 'string', mandatory: true },
        { path: ['born'], type: 'date' },
        { path: ['locality'], type: 'string' },
      ],
      userAuthentication: { loginProviderId, claims },
    })

    it('happy: a provider names a presentation configuration; a credential maps presented claims paths (string or array) to its fields', async () => {
      const pid = await pidPresentation()
      const lp = random('lp')
      const created = await send('POST', '/api/login-providers', {
        id: lp,
        kind: 'presentation',
        presentationConfigId: pid,
      })
      expect(created.statusCode).toBe(201)
      expect(created.json()).toStrictEqual({
        id: lp,
        kind: 'presentation',
        description: null,
        issuer: null,
        clientId: null,
        presentationConfigId: pid,
        scopes: ['openid'],
        hasClientSecret: false,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      const id = random('badge')
      const claims = { family_name: ['family_name'], born: 'birthdate', locality: ['address', 'locality'] }
      const credential = await send('POST', '/api/credentials', badge(id, lp, claims))
      expect(credential.statusCode).toBe(201)
      expect(credential.json().userAuthentication).toStrictEqual({ loginProviderId: lp, claims })
      // Named by a provider, the presentation configuration cannot be deleted.
      const deleted = await h.app.inject({
        method: 'DELETE',
        url: `/api/presentations/${pid}`,
        headers: admin.auth,
      })
      expect(deleted.statusCode).toBe(409)
    })

    it('issue 26: a replace of the presentation configuration that stops asking for a mapped claim is a 422 naming the credential; one that keeps it is saved', async () => {
      const pid = await pidPresentation()
      const lp = random('lp')
      await send('POST', '/api/login-providers', { id: lp, kind: 'presentation', presentationConfigId: pid })
      const id = random('badge')
      expect((await send('POST', '/api/credentials', badge(id, lp, { born: 'birthdate' }))).statusCode).toBe(
        201,
      )
      const query = (claims: string[]) => ({
        id: pid,
        keyChainId,
        dcqlQuery: {
          credentials: [
            {
              id: 'pid',
              format: 'dc+sd-jwt',
              meta: { vct_values: [PID_VCT] },
              claims: claims.map((name) => ({ path: [name] })),
            },
          ],
        },
      })
      const dropped = await send('PUT', `/api/presentations/${pid}`, query(['family_name']))
      expect(dropped.statusCode).toBe(422)
      expect(dropped.json().errors).toStrictEqual([
        {
          path: 'body.dcqlQuery',
          message: expect.stringMatching(
            new RegExp(`^credential '${id}'\\.userAuthentication\\.claims\\.born: `),
          ),
        },
      ])
      const kept = await send('PUT', `/api/presentations/${pid}`, query(['birthdate', 'given_name']))
      expect(kept.statusCode).toBe(200)
    })

    it('error: kind fields are checked (400 naming each, like every schema error); an unknown presentation configuration is a 422', async () => {
      const mixed = await send('POST', '/api/login-providers', {
        ...provider(random('lp')),
        kind: 'presentation',
      })
      expect(mixed.statusCode).toBe(400)
      expect(
        mixed
          .json()
          .errors.map((e: { path: string }) => e.path)
          .sort(),
      ).toStrictEqual(['body.clientId', 'body.issuer', 'body.presentationConfigId'].sort())
      const openidWithout = await send('POST', '/api/login-providers', { id: random('lp') })
      expect(openidWithout.statusCode).toBe(400)
      expect(
        openidWithout
          .json()
          .errors.map((e: { path: string }) => e.path)
          .sort(),
      ).toStrictEqual(['body.clientId', 'body.issuer'])
      const unknown = await send('POST', '/api/login-providers', {
        id: random('lp'),
        kind: 'presentation',
        presentationConfigId: 'nope',
      })
      expect(unknown.statusCode).toBe(422)
      expect(unknown.json().errors).toStrictEqual([
        { path: 'body.presentationConfigId', message: expect.stringContaining("'nope'") },
      ])
    })

    it('issue 26 / OpenID4VP 1.0 §6.3: a mapped path the DCQL query does not ask for, or of another type than the field where the tenant issues the PID itself, is a 422 naming the mapping', async () => {
      const pid = await pidPresentation()
      const lp = random('lp')
      await send('POST', '/api/login-providers', { id: lp, kind: 'presentation', presentationConfigId: pid })
      const notAsked = await send(
        'POST',
        '/api/credentials',
        badge(random('badge'), lp, { family_name: ['given_name'] }),
      )
      expect(notAsked.statusCode).toBe(422)
      expect(notAsked.json().errors).toStrictEqual([
        {
          path: 'body.userAuthentication.claims.family_name',
          message: expect.stringContaining(`presentation configuration '${pid}'`),
        },
      ])
      // The tenant issues the PID too: its fields say what a presented PID holds.
      const issued = await send('POST', '/api/credentials', {
        id: random('pidcfg'),
        config: { format: 'dc+sd-jwt', vct: PID_VCT, scope: random('pidscope') },
        keyChainId,
        fields: [
          { path: ['family_name'], type: 'string', mandatory: true },
          { path: ['birthdate'], type: 'date' },
        ],
      })
      expect(issued.statusCode).toBe(201)
      const wrongType = await send(
        'POST',
        '/api/credentials',
        badge(random('badge'), lp, { locality: 'birthdate', born: 'birthdate' }),
      )
      expect(wrongType.statusCode).toBe(422)
      expect(wrongType.json().errors).toStrictEqual([
        {
          path: 'body.userAuthentication.claims.locality',
          message: 'the presented claim is of type date, the field of type string',
        },
      ])
      const noSuchClaim = await send(
        'POST',
        '/api/credentials',
        badge(random('badge'), lp, { locality: ['address', 'locality'] }),
      )
      expect(noSuchClaim.statusCode).toBe(422)
      expect(noSuchClaim.json().errors[0].message).toBe(
        'the presented credential type has no claim at ["address","locality"]',
      )
    })

    it('error: an OpenID provider takes claim names, not paths; switching a provider to a kind its credentials cannot use is a 422', async () => {
      const idp = random('idp')
      await send('POST', '/api/login-providers', provider(idp))
      const paths = await send(
        'POST',
        '/api/credentials',
        staff(random('s'), keyChainId, idp, { given_name: ['given_name'] } as never),
      )
      expect(paths.statusCode).toBe(422)
      expect(paths.json().errors).toStrictEqual([
        {
          path: 'body.userAuthentication.claims.given_name',
          message: 'an OpenID login provider names its claims by name: a string',
        },
      ])
      const staffId = random('s')
      expect(
        (
          await send(
            'POST',
            '/api/credentials',
            staff(staffId, keyChainId, idp, { given_name: 'given_name' }),
          )
        ).statusCode,
      ).toBe(201)
      const pid = await pidPresentation()
      const switched = await send('PUT', `/api/login-providers/${idp}`, {
        id: idp,
        kind: 'presentation',
        presentationConfigId: pid,
      })
      expect(switched.statusCode).toBe(422)
      expect(switched.json().errors[0].message).toContain(`credential '${staffId}'`)
    })
  })

  it('S-100, S-105: another tenant cannot read, replace, delete or reference a login provider (404 / 422); it stays unchanged', async () => {
    const idp = random('idp')
    await send('POST', '/api/login-providers', provider(idp))
    const before = (await h.app.inject({ url: `/api/login-providers/${idp}`, headers: admin.auth })).json()
    const intruder = await h.createClient(h.tenantB, ['issuance:config', 'key:manage'])
    const hijack = { ...provider(idp), issuer: 'https://attacker.example.com', clientSecret: null }
    for (const attempt of [
      { method: 'GET', url: `/api/login-providers/${idp}` },
      { method: 'PUT', url: `/api/login-providers/${idp}`, payload: hijack },
      { method: 'DELETE', url: `/api/login-providers/${idp}` },
      { method: 'GET', url: `/api/tenants/${h.tenantA}/login-providers` },
      { method: 'GET', url: `/api/tenants/${h.tenantA}/login-providers/${idp}` },
      { method: 'PUT', url: `/api/tenants/${h.tenantA}/login-providers/${idp}`, payload: hijack },
      { method: 'DELETE', url: `/api/tenants/${h.tenantA}/login-providers/${idp}` },
      { method: 'POST', url: `/api/tenants/${h.tenantA}/login-providers`, payload: provider(random('idp')) },
    ] as const) {
      const response = await h.app.inject({ ...attempt, headers: intruder.auth })
      expect(response.statusCode, `${attempt.method} ${attempt.url}`).toBe(404)
      expect(response.json().code).toBe('not_found')
    }
    const after = (await h.app.inject({ url: `/api/login-providers/${idp}`, headers: admin.auth })).json()
    expect(after).toStrictEqual(before)
    expect(await storedSecret(h.tenantA, idp)).toBe('a-client-secret-value')

    const otherKeys = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: intruder.auth,
        payload: { source: 'generate' },
      })
    ).json().id
    const foreign = await send('POST', '/api/credentials', staff(random('s'), otherKeys, idp, {}), intruder)
    expect(foreign.statusCode).toBe(422)
    expect(foreign.json().errors.map((e: { path: string }) => e.path)).toContain(
      'body.userAuthentication.loginProviderId',
    )
    const offerOnly = await h.createClient(h.tenantA, ['issuance:offer'])
    expect((await h.app.inject({ url: '/api/login-providers', headers: offerOnly.auth })).statusCode).toBe(
      403,
    )
  })

  it('S-101: with two tenants, each lists only its own login providers; an operator lists either by path', async () => {
    const adminB = await h.createClient(h.tenantB, ['issuance:config'])
    const ofA = random('idp')
    const ofB = random('idp')
    expect((await send('POST', '/api/login-providers', provider(ofA))).statusCode).toBe(201)
    expect((await send('POST', '/api/login-providers', provider(ofB), adminB)).statusCode).toBe(201)
    const ids = async (url: string, client: { auth: Record<string, string> }) =>
      (await h.app.inject({ url, headers: client.auth })).json().items.map((item: { id: string }) => item.id)
    expect(await ids('/api/login-providers?limit=100', admin)).toContain(ofA)
    expect(await ids('/api/login-providers?limit=100', admin)).not.toContain(ofB)
    expect(await ids('/api/login-providers?limit=100', adminB)).toStrictEqual([ofB])
    const operator = await h.createClient(null, ['tenant:manage', 'issuance:config'])
    expect(await ids(`/api/tenants/${h.tenantB}/login-providers`, operator)).toStrictEqual([ofB])
    expect(
      (await h.app.inject({ url: '/api/tenants/no-such-tenant/login-providers', headers: operator.auth }))
        .statusCode,
    ).toBe(404)
  })

  it('audit: create, update and delete of a login provider are recorded without the secret', async () => {
    const id = random('idp')
    await send('POST', '/api/login-providers', provider(id))
    await send('PUT', `/api/login-providers/${id}`, { ...provider(id), clientSecret: 'rotated-secret-value' })
    await h.app.inject({ method: 'DELETE', url: `/api/login-providers/${id}`, headers: admin.auth })
    const rows = await queryRows<{ action: string; actor_client_id: string; detail: unknown }>(
      h.database.db,
      sql`select action, actor_client_id, detail from audit_log
          where tenant_id = ${h.tenantA} and resource_type = 'login-provider' and resource_id = ${id}
          order by at`,
    )
    expect(rows.map((row) => `${row.action} ${row.actor_client_id}`)).toStrictEqual([
      `create ${admin.clientId}`,
      `update ${admin.clientId}`,
      `delete ${admin.clientId}`,
    ])
    const stored = JSON.stringify(rows)
    for (const secret of ['a-client-secret-value', 'rotated-secret-value'])
      expect(stored).not.toContain(secret)
    const events = (
      await h.app.inject({ url: '/api/audit-events?resourceType=login-provider', headers: h.root.auth })
    ).json()
    expect(JSON.stringify(events)).not.toContain('secret-value')
  })

  describe('offers (OpenID4VCI §4.1.1, §5)', () => {
    let offerer: TestClient
    let staffId: string
    let plainId: string
    beforeAll(async () => {
      offerer = await h.createClient(h.tenantA, ['issuance:offer'])
      const idp = random('idp')
      await send('POST', '/api/login-providers', provider(idp))
      staffId = random('staff')
      expect(
        (
          await send(
            'POST',
            '/api/credentials',
            staff(staffId, keyChainId, idp, { given_name: 'given_name' }),
          )
        ).statusCode,
      ).toBe(201)
      plainId = random('plain')
      const { userAuthentication: _u, ...plain } = staff(plainId, keyChainId, idp, {})
      expect((await send('POST', '/api/credentials', plain)).statusCode).toBe(201)
    })
    const offer = (payload: Record<string, unknown>) => send('POST', '/api/offers', payload, offerer)
    const paths = (response: { json(): { errors?: { path: string }[] } }) =>
      (response.json().errors ?? []).map((e) => e.path)

    it('I-25, security: a configuration with userAuthentication cannot be offered with a pre-authorized code (the default) or both grants: 422 naming body.grant', async () => {
      for (const grant of [undefined, 'pre-authorized_code', 'both']) {
        const response = await offer({ credentialConfigurationIds: [staffId], ...(grant ? { grant } : {}) })
        expect(response.statusCode, String(grant)).toBe(422)
        expect(response.headers['content-type']).toContain('application/problem+json')
        expect(paths(response)).toStrictEqual(['body.grant'])
      }
      // Mixed with a configuration without login, the login one still decides.
      const mixed = await offer({
        credentialConfigurationIds: [plainId, staffId],
        claims: { [plainId]: { given_name: 'Erika' } },
      })
      expect(paths(mixed)).toStrictEqual(['body.grant'])
    })

    it('I-25: an authorization_code offer for a configuration with userAuthentication needs no claims (its mandatory fields come from the login)', async () => {
      const response = await offer({ credentialConfigurationIds: [staffId], grant: 'authorization_code' })
      expect(response.statusCode, response.body).toBe(201)
      expect(Object.keys(response.json().credentialOffer.grants)).toStrictEqual(['authorization_code'])
    })

    it('I-25: inline claims for a configuration with userAuthentication are refused (the issuer would ignore them): 422 naming body.claims.<id>', async () => {
      const response = await offer({
        credentialConfigurationIds: [staffId],
        grant: 'authorization_code',
        claims: { [staffId]: { given_name: 'Offered' } },
      })
      expect(response.statusCode).toBe(422)
      expect(paths(response)).toStrictEqual([`body.claims.${staffId}`])
    })

    it('I-24, security: a txCode with grant both is a 422 naming body.txCode (the authorization code flow would skip it); with pre-authorized_code it is taken', async () => {
      const claims = { [plainId]: { given_name: 'Erika' } }
      for (const grant of ['both', 'authorization_code']) {
        const response = await offer({ credentialConfigurationIds: [plainId], grant, claims, txCode: {} })
        expect(response.statusCode, grant).toBe(422)
        expect(paths(response)).toStrictEqual(['body.txCode'])
      }
      const allowed = await offer({
        credentialConfigurationIds: [plainId],
        grant: 'pre-authorized_code',
        claims,
        txCode: {},
      })
      expect(allowed.statusCode).toBe(201)
      expect(allowed.json().txCode).toEqual(expect.any(String))
    })
  })
})
