import { issueTestCertificate } from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const pid = (id: string, keyChainId: string) => ({
  id,
  config: { format: 'dc+sd-jwt', vct: `urn:example:${id}`, display: [{ name: 'PID', locale: 'en' }] },
  keyChainId,
  fields: [
    {
      path: ['given_name'],
      type: 'string',
      mandatory: true,
      disclosable: true,
      display: [{ lang: 'de', label: 'Vorname' }],
    },
    { path: ['address', 'locality'], type: 'string', defaultValue: 'Berlin', disclosable: true },
  ],
})

const mdl = (id: string, keyChainId: string) => ({
  id,
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  keyChainId,
  fields: [{ path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true }],
})

const dcql = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:example:pid'] },
      claims: [{ path: ['given_name'] }],
    },
  ],
}

describe.each(testDatabases())('configurations on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  let keyChainId: string
  let otherTenantKeyChain: string

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    admin = await h.createClient(h.tenantA, ['issuance:config', 'presentation:config', 'key:manage'])
    keyChainId = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: admin.auth,
        payload: { source: 'generate', certificate: { country: 'DE' } },
      })
    ).json().id
    const adminB = await h.createClient(h.tenantB, ['key:manage'])
    otherTenantKeyChain = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: adminB.auth,
        payload: { source: 'generate', id: random('b-keys') },
      })
    ).json().id
  })
  afterAll(() => h.close())

  const post = (url: string, payload: unknown, client = admin) =>
    h.app.inject({ method: 'POST', url, headers: client.auth, payload: payload as object })

  describe('credential configurations', () => {
    it('spec §4: POST /api/tenants/{id}/credentials stores a v2 configuration; GET, list and PUT work', async () => {
      const id = random('pid')
      const created = await post(`/api/tenants/${h.tenantA}/credentials`, pid(id, keyChainId))
      expect(created.statusCode).toBe(201)
      expect(created.json()).toStrictEqual({
        ...pid(id, keyChainId),
        config: { ...pid(id, keyChainId).config, scope: id },
        lifetimeSeconds: 31_536_000,
        keyBinding: true,
        statusManagement: false,
        batchSize: 1,
        refreshTokens: false,
        dpop: 'optional',
        walletAttestation: 'optional',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      const got = await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })
      expect(got.json()).toStrictEqual(created.json())
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/credentials/${id}`,
        headers: admin.auth,
        payload: { ...pid(id, keyChainId), lifetimeSeconds: 86_400 },
      })
      expect(replaced.statusCode).toBe(200)
      expect(replaced.json().lifetimeSeconds).toBe(86_400)
      expect(replaced.json().createdAt).toBe(created.json().createdAt)
      const list = await h.app.inject({ url: '/api/credentials?limit=100', headers: admin.auth })
      expect(list.json().items.map((c: { id: string }) => c.id)).toContain(id)
    })

    it('HAIP 4.3, VCI App. D: dpop, walletAttestation, keyAttestation and refreshTokens round-trip through create, read and replace', async () => {
      const id = random('haip')
      const haip = {
        ...pid(id, keyChainId),
        dpop: 'required',
        walletAttestation: 'required',
        keyAttestation: {
          required: true,
          keyStorage: ['iso_18045_high'],
          userAuthentication: ['iso_18045_high'],
        },
        refreshTokens: true,
      }
      const created = await post('/api/credentials', haip)
      expect(created.statusCode, created.body).toBe(201)
      expect(created.json()).toMatchObject({
        dpop: 'required',
        walletAttestation: 'required',
        keyAttestation: haip.keyAttestation,
        refreshTokens: true,
      })
      const got = (await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).json()
      expect(got).toStrictEqual(created.json())
      // A replace without them goes back to the defaults; keyAttestation is gone.
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/credentials/${id}`,
        headers: admin.auth,
        payload: pid(id, keyChainId),
      })
      expect(replaced.json()).toMatchObject({
        dpop: 'optional',
        walletAttestation: 'optional',
        refreshTokens: false,
      })
      expect(replaced.json()).not.toHaveProperty('keyAttestation')
    })

    it('F-02 / HAIP §6.1.1: dpop or walletAttestation `required` on a key chain with a self-signed certificate is a 422 naming each field, on create and replace; nothing is written', async () => {
      const selfSigned = (
        await post('/api/key-chains', { source: 'generate', certificate: { mode: 'self-signed' } })
      ).json().id
      const id = random('haip-self')
      const refused = await post('/api/credentials', {
        ...pid(id, selfSigned),
        dpop: 'required',
        walletAttestation: 'required',
      })
      expect(refused.statusCode, refused.body).toBe(422)
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(refused.json().errors.map((issue: { path: string }) => issue.path)).toStrictEqual([
        'body.dpop',
        'body.walletAttestation',
      ])
      expect(refused.json().errors[0].message).toContain(`key chain '${selfSigned}'`)
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )

      // Optional is fine for development; a replace that turns one on is refused and changes nothing.
      expect((await post('/api/credentials', pid(id, selfSigned))).statusCode).toBe(201)
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/credentials/${id}`,
        headers: admin.auth,
        payload: { ...pid(id, selfSigned), walletAttestation: 'required' },
      })
      expect(replaced.statusCode, replaced.body).toBe(422)
      expect(replaced.json().errors.map((issue: { path: string }) => issue.path)).toStrictEqual([
        'body.walletAttestation',
      ])
      const stored = await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })
      expect(stored.json().walletAttestation).toBe('optional')
    })

    it('F-02 / HAIP §6.1.1: a key chain that configurations with dpop `required` sign with cannot switch to a self-signed certificate (422 naming body.certificateChain)', async () => {
      const root = await issueTestCertificate({ subject: 'CN=Switch Root', ca: true })
      const leaf = await issueTestCertificate({ subject: 'CN=Switch Leaf', issuer: root })
      const chain = await post('/api/key-chains', {
        source: 'import',
        privateKey: leaf.keys.privateJwk,
        certificateChain: [leaf.pem, root.pem],
      })
      expect(chain.statusCode, chain.body).toBe(201)
      const chainId = chain.json().id
      const configId = random('haip-switch')
      expect(
        (await post('/api/credentials', { ...pid(configId, chainId), dpop: 'required' })).statusCode,
      ).toBe(201)
      const self = await issueTestCertificate({ subject: 'CN=Switch Self', keys: leaf.keys })
      const patch = (certificateChain: string[]) =>
        h.app.inject({
          method: 'PATCH',
          url: `/api/key-chains/${chainId}`,
          headers: admin.auth,
          payload: { certificateChain },
        })
      const refused = await patch([self.pem])
      expect(refused.statusCode, refused.body).toBe(422)
      expect(refused.json().errors).toMatchObject([
        { path: 'body.certificateChain', message: expect.stringContaining(`'${configId}'`) },
      ])
      const kept = await h.app.inject({ url: `/api/key-chains/${chainId}`, headers: admin.auth })
      expect(kept.json().activeKey.certificateChain).toHaveLength(2)
      // A chain issued by a CA is still accepted.
      expect((await patch([leaf.pem, root.pem])).statusCode).toBe(200)
    })

    it('RFC 9457: invalid dpop, walletAttestation, keyAttestation or refreshTokens values are a 400 naming each field; nothing is written', async () => {
      const id = random('badhaip')
      const response = await post('/api/credentials', {
        ...pid(id, keyChainId),
        dpop: 'always',
        walletAttestation: true,
        keyAttestation: { required: 'yes', keyStorage: [], colour: 'red' },
        refreshTokens: 'true',
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().code).toBe('invalid_input')
      expect(
        response
          .json()
          .errors.map((e: { path: string }) => e.path)
          .sort(),
      ).toStrictEqual([
        'body.dpop',
        'body.keyAttestation.colour',
        'body.keyAttestation.keyStorage',
        'body.keyAttestation.required',
        'body.refreshTokens',
        'body.walletAttestation',
      ])
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
    })

    it('VCI App. D: keyAttestation without keyBinding is a 422 naming body.keyAttestation (it would be ignored); nothing is written', async () => {
      const id = random('nobinding')
      const response = await post('/api/credentials', {
        ...pid(id, keyChainId),
        keyBinding: false,
        keyAttestation: { required: true },
      })
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.keyAttestation', message: expect.stringContaining('keyBinding: true') },
      ])
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
      expect((await post('/api/credentials', { ...pid(id, keyChainId), keyBinding: false })).statusCode).toBe(
        201,
      )
    })

    it('stores an mdoc configuration with per-field namespaces', async () => {
      const response = await post('/api/credentials', mdl(random('mdl'), keyChainId))
      expect(response.statusCode).toBe(201)
      expect(response.json().fields[0].namespace).toBe('org.iso.18013.5.1')
    })

    it('spec §2.1: the claims JSON Schema is derived from fields on request', async () => {
      const id = random('schema')
      await post('/api/credentials', pid(id, keyChainId))
      const schema = await h.app.inject({ url: `/api/credentials/${id}/schema`, headers: admin.auth })
      expect(schema.json()).toMatchObject({
        type: 'object',
        required: ['given_name'],
        properties: {
          given_name: { type: 'string' },
          address: { type: 'object', properties: { locality: { type: 'string' } } },
        },
      })
    })

    it('spec §2.1–2.4: every removed field is refused, named with its replacement', async () => {
      const legacy = {
        ...pid(random('v1'), keyChainId),
        claims: { given_name: 'Erika' },
        disclosureFrame: { _sd: ['given_name'] },
        schema: {},
        claimsWebhook: { url: 'https://x.example' },
        notificationWebhook: { url: 'https://x.example' },
        keyId: 'k',
        certId: 'c',
        config: {
          format: 'mso_mdoc',
          docType: 'x',
          namespace: 'ns',
          claimsByNamespace: {},
          claimsMetadata: {},
        },
      }
      const response = await post('/api/credentials', legacy)
      expect(response.statusCode).toBe(400)
      const errors = response.json().errors as { path: string; message: string }[]
      expect(errors.map((e) => e.path)).toStrictEqual([
        'body.claims',
        'body.disclosureFrame',
        'body.schema',
        'body.claimsWebhook',
        'body.notificationWebhook',
        'body.keyId',
        'body.certId',
        'body.config.namespace',
        'body.config.claimsByNamespace',
        'body.config.claimsMetadata',
      ])
      expect(errors[3]?.message).toContain('attributeProviderId')
      expect(
        (await h.app.inject({ url: `/api/credentials/${legacy.id}`, headers: admin.auth })).statusCode,
      ).toBe(404)
    })

    it('issue 23 item 8: configVersion 2 (clients written to the 5.0 interface send it) is accepted; any other value is refused on its field', async () => {
      const id = random('v2')
      const created = await post('/api/credentials', { configVersion: 2, ...pid(id, keyChainId) })
      expect(created.statusCode).toBe(201)
      expect(created.json().id).toBe(id)
      for (const configVersion of [1, 3, '2']) {
        const refused = await post('/api/credentials', { ...pid(random('v'), keyChainId), configVersion })
        expect(refused.statusCode).toBe(400)
        expect(refused.json().errors).toStrictEqual([
          {
            path: 'body.configVersion',
            message: expect.stringMatching(/^configVersion must be 2 \(the field-based model/),
          },
        ])
      }
    })

    it('rule violations are 422 with each field named: mdoc namespace, vct, display locale', async () => {
      const bad = { ...mdl(random('bad'), keyChainId), fields: [{ path: ['family_name'], type: 'string' }] }
      const response = await post('/api/credentials', bad)
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.fields.0.namespace', message: 'mso_mdoc fields need a namespace' },
      ])
    })

    it('F-03 / SD-JWT VC §3.2.2.2: a disclosable iss, vct or cnf field is a 422 naming each field; nothing is written', async () => {
      const id = random('reserved')
      const response = await post('/api/credentials', {
        ...pid(id, keyChainId),
        fields: [
          ...pid(id, keyChainId).fields,
          { path: ['iss'], type: 'string', disclosable: true },
          { path: ['vct'], type: 'string', disclosable: true },
          { path: ['cnf', 'jwk'], type: 'object', disclosable: true },
        ],
      })
      expect(response.statusCode).toBe(422)
      expect(response.json()).toMatchObject({ status: 422, code: 'rule_violation' })
      expect(response.json().errors).toStrictEqual([
        {
          path: 'body.fields.2.disclosable',
          message: "'iss' must not be selectively disclosable (SD-JWT VC §3.2.2.2)",
        },
        {
          path: 'body.fields.3.disclosable',
          message: "'vct' must not be selectively disclosable (SD-JWT VC §3.2.2.2)",
        },
        {
          path: 'body.fields.4.disclosable',
          message: "'cnf' must not be selectively disclosable (SD-JWT VC §3.2.2.2)",
        },
      ])
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
    })

    it('F-03: a plain (non-disclosable) status field is a 422 too: the issuer writes status itself and would replace it', async () => {
      const id = random('status-field')
      const response = await post('/api/credentials', {
        ...pid(id, keyChainId),
        fields: [...pid(id, keyChainId).fields, { path: ['status'], type: 'object' }],
      })
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        {
          path: 'body.fields.2.path',
          message: "'status' is set by the issuer in every credential; it cannot be a field",
        },
      ])
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
    })

    it('S-129 / RFC 9901 §4.2: a field named _sd, _sd_alg or ... (also nested), or a default value holding one, is a 422 naming each path; nothing is written', async () => {
      const id = random('sd-names')
      const response = await post('/api/credentials', {
        ...pid(id, keyChainId),
        fields: [
          ...pid(id, keyChainId).fields,
          { path: ['_sd'], type: 'string' },
          { path: ['place', '_sd_alg'], type: 'string' },
          { path: ['...'], type: 'string' },
          { path: ['home'], type: 'object', defaultValue: { _sd: ['digest'] } },
        ],
      })
      expect(response.statusCode).toBe(422)
      expect(response.json()).toMatchObject({ status: 422, code: 'rule_violation' })
      const message = (name: string) =>
        `'${name}' is an SD-JWT structure name (RFC 9901 §4.2); claims cannot use it`
      expect(response.json().errors).toStrictEqual([
        { path: 'body.fields.2.path', message: message('_sd') },
        { path: 'body.fields.3.path', message: message('_sd_alg') },
        { path: 'body.fields.4.path', message: message('...') },
        { path: 'body.fields.5.defaultValue._sd', message: message('_sd') },
      ])
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
    })

    it('ISO 18013-5 Annex B.1: an mso_mdoc configuration whose key chain certificate names no country (C=) is a 422 naming body.keyChainId; nothing is written', async () => {
      const noCountry = (
        await h.app.inject({
          method: 'POST',
          url: '/api/key-chains',
          headers: admin.auth,
          payload: { source: 'generate', certificate: { subject: 'CN=No Country' } },
        })
      ).json().id as string
      const id = random('mdl')
      const response = await post('/api/credentials', mdl(id, noCountry))
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        {
          path: 'body.keyChainId',
          message: `mso_mdoc needs a country (C=) in the certificate subject and issuer (ISO 18013-5 Annex B.1); key chain '${noCountry}' has none`,
        },
      ])
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
      // The same chain serves an SD-JWT VC configuration: only mdoc readers need the country.
      expect((await post('/api/credentials', pid(random('pid'), noCountry))).statusCode).toBe(201)
      // A key chain generated with `country` carries C= in the subject and (internal CA) the issuer.
      const withCountry = (
        await h.app.inject({
          method: 'POST',
          url: '/api/key-chains',
          headers: admin.auth,
          payload: {
            source: 'generate',
            certificate: { mode: 'internal-ca', subject: 'CN=Mdl', country: 'AT' },
          },
        })
      ).json().id as string
      expect((await post('/api/credentials', mdl(random('mdl'), withCountry))).statusCode).toBe(201)
    })

    it('references must exist in the same tenant: another tenant’s key chain is refused', async () => {
      const response = await post('/api/credentials', {
        ...pid(random('x'), otherTenantKeyChain),
        attributeProviderId: 'nope',
      })
      expect(response.statusCode).toBe(422)
      expect(response.json().errors.map((e: { path: string }) => e.path)).toStrictEqual([
        'body.keyChainId',
        'body.attributeProviderId',
      ])
    })

    it('HAIP 4.3 (I-06): one scope cannot name two credential types', async () => {
      const first = random('scoped')
      await post('/api/credentials', {
        ...pid(first, keyChainId),
        config: { ...pid(first, keyChainId).config, scope: 'pid-scope' },
      })
      const second = random('scoped')
      const clash = await post('/api/credentials', {
        ...pid(second, keyChainId),
        config: { format: 'dc+sd-jwt', vct: 'urn:other', scope: 'pid-scope' },
      })
      expect(clash.statusCode).toBe(422)
      expect(clash.json().errors[0].path).toBe('body.config.scope')
    })

    it('a key chain in use cannot be deleted (409); a taken id is 409', async () => {
      const id = random('inuse')
      await post('/api/credentials', pid(id, keyChainId))
      expect((await post('/api/credentials', pid(id, keyChainId))).statusCode).toBe(409)
      const del = await h.app.inject({
        method: 'DELETE',
        url: `/api/key-chains/${keyChainId}`,
        headers: admin.auth,
      })
      expect(del.statusCode).toBe(409)
      expect(
        (await h.app.inject({ url: `/api/key-chains/${keyChainId}`, headers: admin.auth })).statusCode,
      ).toBe(200)
    })
  })

  describe('presentation configurations', () => {
    it('stores a configuration with a DCQL query and defaults', async () => {
      const id = random('age')
      const response = await post('/api/presentations', { id, dcqlQuery: dcql, keyChainId })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({
        id,
        responseMode: 'direct_post.jwt',
        lifetimeSeconds: 300,
        dcqlQuery: dcql,
      })
    })

    it('OpenID4VP §6 (V-10): a malformed DCQL query is 422 naming the path', async () => {
      const broken = {
        credentials: [
          { id: 'm', format: 'mso_mdoc', meta: { doctype_value: 'x' }, claims: [{ path: ['no-namespace'] }] },
        ],
      }
      const response = await post('/api/presentations', { id: random('bad'), dcqlQuery: broken, keyChainId })
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        {
          path: 'body.dcqlQuery.credentials.0.claims.0.path',
          message: 'mso_mdoc claim paths are exactly [namespace, element identifier]',
        },
      ])
    })

    it('issue 11: a javascript:, data: or http redirectUri is a 422 problem naming body.redirectUri, on create and replace; nothing is written', async () => {
      const id = random('redirect')
      for (const [redirectUri, scheme] of [
        ['javascript:alert(document.cookie)', 'javascript'],
        ['data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==', 'data'],
        ['http://rp.example.com/done', 'http'],
      ]) {
        const response = await post('/api/presentations', { id, dcqlQuery: dcql, keyChainId, redirectUri })
        expect(response.statusCode, redirectUri).toBe(422)
        expect(response.headers['content-type']).toContain('application/problem+json')
        expect(response.json()).toMatchObject({ status: 422, code: 'rule_violation' })
        expect(response.json().errors).toStrictEqual([
          { path: 'body.redirectUri', message: `must use https, not '${scheme}'` },
        ])
      }
      expect((await h.app.inject({ url: `/api/presentations/${id}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
      const good = { id, dcqlQuery: dcql, keyChainId, redirectUri: 'https://rp.example.com/done' }
      expect((await post('/api/presentations', good)).statusCode).toBe(201)
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/presentations/${id}`,
        headers: admin.auth,
        payload: { ...good, redirectUri: 'javascript:alert(1)' },
      })
      expect(replaced.statusCode).toBe(422)
      expect(replaced.json().errors).toStrictEqual([
        { path: 'body.redirectUri', message: "must use https, not 'javascript'" },
      ])
      expect(
        (await h.app.inject({ url: `/api/presentations/${id}`, headers: admin.auth })).json().redirectUri,
      ).toBe('https://rp.example.com/done')
    })

    it('a presentation client without presentation:config is 403', async () => {
      const offerOnly = await h.createClient(h.tenantA, ['issuance:config'])
      expect(
        (await post('/api/presentations', { id: random('x'), dcqlQuery: dcql, keyChainId }, offerOnly))
          .statusCode,
      ).toBe(403)
    })
  })

  describe('attribute providers and webhook endpoints', () => {
    it('an HMAC secret is generated and shown once; an API key value is never returned', async () => {
      const id = random('attrs')
      const created = await post('/api/attribute-providers', {
        id,
        url: 'https://attributes.example.com/pid',
        auth: { type: 'hmac' },
      })
      expect(created.statusCode).toBe(201)
      expect(created.json()).toMatchObject({
        id,
        auth: { type: 'hmac' },
        signingSecret: expect.any(String),
        timeoutMs: 5000,
      })
      const got = await h.app.inject({ url: `/api/attribute-providers/${id}`, headers: admin.auth })
      expect(got.json()).not.toHaveProperty('signingSecret')
      // Replacing with hmac again keeps the secret: nothing new to show.
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/attribute-providers/${id}`,
        headers: admin.auth,
        payload: { id, url: 'https://attributes.example.com/v2', auth: { type: 'hmac' } },
      })
      expect(replaced.json()).not.toHaveProperty('signingSecret')

      const hook = await post('/api/webhook-endpoints', {
        id: random('hook'),
        url: 'https://hooks.example.com/in',
        auth: { type: 'api-key', headerName: 'x-token', value: 'super-secret-api-key' },
      })
      expect(hook.statusCode).toBe(201)
      expect(hook.json().auth).toStrictEqual({ type: 'api-key', headerName: 'x-token' })
      expect(hook.body).not.toContain('super-secret-api-key')
    })

    it('URLs must be https and public unless allowed', async () => {
      for (const url of [
        'http://attributes.example.com',
        'https://127.0.0.1:8080',
        'https://10.0.0.5/x',
        'https://metadata.internal',
      ]) {
        const response = await post('/api/webhook-endpoints', { id: random('h'), url })
        expect(response.statusCode, url).toBe(422)
        expect(response.json().errors[0].path).toBe('body.url')
      }
    })

    it('S-120: IPv6, numeric and trailing-dot forms of internal addresses are a 422 naming body.url; nothing is written', async () => {
      for (const url of [
        'https://[::ffff:7f00:1]/hook',
        'https://[::ffff:a9fe:a9fe]/latest/meta-data',
        'https://[::1]/',
        'https://[::7f00:1]/',
        'https://[64:ff9b::a9fe:a9fe]/',
        'https://[2002:a00:1::]/',
        'https://[fd12:3456::1]/',
        'https://[fe80::1]/',
        'https://[ff02::1]/',
        'https://[::]/',
        'https://2130706433/',
        'https://0x7f000001/',
        'https://017700000001/',
        'https://127.1/',
        'https://localhost./',
        'https://metadata.google.internal./computeMetadata/v1/',
      ]) {
        for (const collection of ['webhook-endpoints', 'attribute-providers']) {
          const id = random('h')
          const response = await post(`/api/${collection}`, { id, url })
          expect(response.statusCode, `${collection} ${url}`).toBe(422)
          expect(response.headers['content-type']).toContain('application/problem+json')
          expect(response.json().errors).toStrictEqual([
            { path: 'body.url', message: expect.stringContaining('allow it with OUTBOUND_ALLOWED_HOSTS') },
          ])
          expect(
            (await h.app.inject({ url: `/api/${collection}/${id}`, headers: admin.auth })).statusCode,
          ).toBe(404)
        }
      }
    })

    it('a referenced provider cannot be deleted; a configuration may name it', async () => {
      const provider = random('p')
      await post('/api/attribute-providers', { id: provider, url: 'https://attributes.example.com' })
      const id = random('with-provider')
      expect(
        (await post('/api/credentials', { ...pid(id, keyChainId), attributeProviderId: provider }))
          .statusCode,
      ).toBe(201)
      expect(
        (
          await h.app.inject({
            method: 'DELETE',
            url: `/api/attribute-providers/${provider}`,
            headers: admin.auth,
          })
        ).statusCode,
      ).toBe(409)
      await h.app.inject({ method: 'DELETE', url: `/api/credentials/${id}`, headers: admin.auth })
      expect(
        (
          await h.app.inject({
            method: 'DELETE',
            url: `/api/attribute-providers/${provider}`,
            headers: admin.auth,
          })
        ).statusCode,
      ).toBe(204)
    })
  })

  describe('S-105: references to another tenant', () => {
    /** Tenant A's endpoints, and a tenant B client with a key chain of its own. */
    async function setUp() {
      const provider = random('a-provider')
      const hook = random('a-hook')
      expect(
        (await post('/api/attribute-providers', { id: provider, url: 'https://attributes.example.com' }))
          .statusCode,
      ).toBe(201)
      expect(
        (await post('/api/webhook-endpoints', { id: hook, url: 'https://hooks.example.com' })).statusCode,
      ).toBe(201)
      const intruder = await h.createClient(h.tenantB, ['issuance:config', 'presentation:config'])
      return { provider, hook, intruder }
    }

    it('S-105: tenant B cannot create or replace a credential configuration naming tenant A’s attribute provider or webhook endpoint (422); nothing is written', async () => {
      const { provider, hook, intruder } = await setUp()
      const id = random('b-pid')
      const foreign = {
        ...pid(id, otherTenantKeyChain),
        attributeProviderId: provider,
        webhookEndpointId: hook,
      }
      const created = await post('/api/credentials', foreign, intruder)
      expect(created.statusCode).toBe(422)
      expect(created.headers['content-type']).toContain('application/problem+json')
      expect(created.json().errors).toStrictEqual([
        { path: 'body.attributeProviderId', message: `no attributeProvider '${provider}' in this tenant` },
        { path: 'body.webhookEndpointId', message: `no webhookEndpoint '${hook}' in this tenant` },
      ])
      expect((await h.app.inject({ url: `/api/credentials/${id}`, headers: intruder.auth })).statusCode).toBe(
        404,
      )
      // The operator form with the tenant in the path is held to the same tenant.
      const operator = await h.createClient(null, ['tenant:manage', 'issuance:config'])
      const viaPath = await post(`/api/tenants/${h.tenantB}/credentials`, foreign, operator)
      expect(viaPath.statusCode).toBe(422)

      expect((await post('/api/credentials', pid(id, otherTenantKeyChain), intruder)).statusCode).toBe(201)
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/credentials/${id}`,
        headers: intruder.auth,
        payload: foreign,
      })
      expect(replaced.statusCode).toBe(422)
      const stored = (await h.app.inject({ url: `/api/credentials/${id}`, headers: intruder.auth })).json()
      expect(stored).not.toHaveProperty('attributeProviderId')
      expect(stored).not.toHaveProperty('webhookEndpointId')
    })

    it('S-105: tenant B cannot create or replace a presentation configuration naming tenant A’s webhook endpoint (422); nothing is written', async () => {
      const { hook, intruder } = await setUp()
      const id = random('b-age')
      const own = { id, dcqlQuery: dcql, keyChainId: otherTenantKeyChain }
      const created = await post('/api/presentations', { ...own, webhookEndpointId: hook }, intruder)
      expect(created.statusCode).toBe(422)
      expect(created.json().errors).toStrictEqual([
        { path: 'body.webhookEndpointId', message: `no webhookEndpoint '${hook}' in this tenant` },
      ])
      expect(
        (await h.app.inject({ url: `/api/presentations/${id}`, headers: intruder.auth })).statusCode,
      ).toBe(404)
      expect((await post('/api/presentations', own, intruder)).statusCode).toBe(201)
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/presentations/${id}`,
        headers: intruder.auth,
        payload: { ...own, webhookEndpointId: hook },
      })
      expect(replaced.statusCode).toBe(422)
      expect(
        (await h.app.inject({ url: `/api/presentations/${id}`, headers: intruder.auth })).json(),
      ).not.toHaveProperty('webhookEndpointId')
    })
  })

  describe('security', () => {
    it('another tenant’s configurations are 404 and unchanged', async () => {
      const id = random('private')
      await post('/api/credentials', pid(id, keyChainId))
      const intruder = await h.createClient(h.tenantB, ['issuance:config'])
      for (const attempt of [
        { method: 'GET', url: `/api/credentials/${id}` },
        { method: 'GET', url: `/api/credentials/${id}/schema` },
        { method: 'PUT', url: `/api/credentials/${id}`, payload: pid(id, otherTenantKeyChain) },
        { method: 'DELETE', url: `/api/credentials/${id}` },
        { method: 'GET', url: `/api/tenants/${h.tenantA}/credentials` },
      ] as const) {
        const response = await h.app.inject({ ...attempt, headers: intruder.auth })
        expect(response.statusCode, `${attempt.method} ${attempt.url}`).toBe(404)
      }
      expect(
        (await h.app.inject({ url: `/api/credentials/${id}`, headers: admin.auth })).json().keyChainId,
      ).toBe(keyChainId)
    })
  })
})
