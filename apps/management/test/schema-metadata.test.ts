import { createHash, X509Certificate } from 'node:crypto'
import { deriveCredentialJsonSchema } from '@credential-service/core-domain'
import { createVaultProvider } from '@credential-service/crypto'
import { startFakeVault } from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const sri = (bytes: Uint8Array | string) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`

const pid = (id: string, keyChainId: string) => ({
  id,
  description: 'Person identification data',
  config: {
    format: 'dc+sd-jwt',
    vct: `https://credentials.example.com/types/${id}`,
    display: [
      { name: 'PID', locale: 'en', background_color: '#12107c', logo: { uri: 'https://x.test/l.png' } },
    ],
  },
  keyChainId,
  fields: [
    {
      path: ['given_name'],
      type: 'string',
      mandatory: true,
      disclosable: true,
      display: [{ lang: 'de', label: 'Vorname' }],
    },
    { path: ['address', 'locality'], type: 'string', display: [{ name: 'Town', locale: 'en' }] },
    { path: ['age_over_18'], type: 'boolean', disclosable: true },
  ],
})

describe.each(testDatabases())('schema-metadata signing on $name', (testDatabase) => {
  let h: Harness
  let vault: Awaited<ReturnType<typeof startFakeVault>>
  let admin: TestClient
  let adminB: TestClient
  let keyChainId: string
  let otherKeyChainId: string
  let configId: string
  let otherConfigId: string

  beforeAll(async () => {
    vault = await startFakeVault('vault-token')
    h = await createHarness(testDatabase, {
      providers: { vault: createVaultProvider({ address: vault.address, token: 'vault-token' }) },
    })
    admin = await h.createClient(h.tenantA, ['issuance:config', 'key:manage'])
    adminB = await h.createClient(h.tenantB, ['issuance:config', 'key:manage'])
    keyChainId = (await post('/api/key-chains', { source: 'generate' })).json().id
    otherKeyChainId = (await post('/api/key-chains', { source: 'generate' }, adminB)).json().id
    configId = random('pid')
    expect((await post('/api/credentials', pid(configId, keyChainId))).statusCode).toBe(201)
    otherConfigId = random('pid-b')
    expect((await post('/api/credentials', pid(otherConfigId, otherKeyChainId), adminB)).statusCode).toBe(201)
  })
  afterAll(async () => {
    await h.close()
    await vault.close()
  })

  function post(url: string, payload: unknown, client = admin) {
    return h.app.inject({ method: 'POST', url, headers: client.auth, payload: payload as object })
  }
  const sign = (payload: unknown, client = admin) => post('/api/schema-metadata/sign', payload, client)
  const signVersion = (payload: unknown, client = admin) =>
    post('/api/schema-metadata/sign-version', payload, client)

  async function keyChain(id: string, client = admin) {
    return (await h.app.inject({ url: `/api/key-chains/${id}`, headers: client.auth })).json()
  }

  /** Verifies the JWS with the key chain's public key; answers the header and the payload bytes. */
  async function verifyWith(jws: string, publicJwk: JWK) {
    const header = decodeProtectedHeader(jws)
    const { payload } = await compactVerify(jws, await importJWK(publicJwk, header.alg as string))
    return { header, payload }
  }

  describe('happy', () => {
    it('spec §4 note 5: sign derives type metadata from a configuration and signs it with its key chain', async () => {
      const response = await sign({ credentialConfigId: configId })
      expect(response.statusCode).toBe(200)
      const body = response.json()
      const chain = await keyChain(keyChainId)
      expect(body).toStrictEqual({
        jws: expect.any(String),
        metadata: expect.any(Object),
        integrity: expect.stringMatching(/^sha256-/),
        keyChainId,
        kid: chain.activeKey.kid,
        alg: chain.algorithm,
        signedAt: expect.any(String),
      })

      const { header, payload } = await verifyWith(body.jws, chain.activeKey.publicJwk)
      expect(header).toStrictEqual({
        alg: chain.algorithm,
        typ: 'vct-metadata+jwt',
        kid: chain.activeKey.kid,
        x5c: expect.any(Array),
        iat: expect.any(Number),
      })
      // The x5c leaf is the key chain's certificate, and certifies the signing key.
      const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'))
      expect(leaf.raw.equals(new X509Certificate(chain.activeKey.certificateChain[0]).raw)).toBe(true)
      expect(leaf.publicKey.export({ format: 'jwk' })).toMatchObject({
        x: chain.activeKey.publicJwk.x,
        y: chain.activeKey.publicJwk.y,
      })

      // SD-JWT VC `vct#integrity`: the SRI digest of exactly the signed bytes.
      expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual(body.metadata)
      expect(body.integrity).toBe(sri(payload))
      expect(body.integrity).toBe(sri(JSON.stringify(body.metadata)))

      const stored = (await h.app.inject({ url: `/api/credentials/${configId}`, headers: admin.auth })).json()
      expect(body.metadata).toStrictEqual({
        vct: stored.config.vct,
        name: 'PID',
        description: 'Person identification data',
        display: [
          {
            locale: 'en',
            name: 'PID',
            rendering: { simple: { logo: { uri: 'https://x.test/l.png' }, background_color: '#12107c' } },
          },
        ],
        claims: [
          {
            path: ['given_name'],
            display: [{ locale: 'de', label: 'Vorname' }],
            sd: 'always',
            mandatory: true,
          },
          { path: ['address', 'locality'], display: [{ locale: 'en', label: 'Town' }], sd: 'never' },
          { path: ['age_over_18'], sd: 'always' },
        ],
        schema: deriveCredentialJsonSchema(stored),
      })
      // The claims part of the schema is the one served for the configuration (spec §2.1).
      const claimsSchema = (
        await h.app.inject({ url: `/api/credentials/${configId}/schema`, headers: admin.auth })
      ).json()
      for (const [name, schema] of Object.entries(claimsSchema.properties))
        expect(body.metadata.schema.properties[name]).toStrictEqual(schema)
      expect(body.metadata.schema.required).toStrictEqual(['vct', ...claimsSchema.required])
      expect(body.metadata.schema.additionalProperties).toBe(false)
    })

    it('signs a given document as sent (extension members kept), with the named key chain', async () => {
      const metadata = {
        vct: 'urn:example:membership',
        name: 'Membership',
        claims: [{ path: ['member', null], sd: 'allowed', svg_id: 'member' }],
        schema_uri: 'https://schemas.example.com/membership.json',
        'schema_uri#integrity': sri('{}'),
        'x-registry': { id: 7 },
      }
      const response = await sign({ metadata, keyChainId })
      expect(response.statusCode).toBe(200)
      const body = response.json()
      const { payload } = await verifyWith(body.jws, (await keyChain(keyChainId)).activeKey.publicJwk)
      expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual(metadata)
      expect(body.metadata).toStrictEqual(metadata)
      expect(body.integrity).toBe(sri(payload))
    })

    it('given members replace derived ones; a schema_uri replaces the derived schema', async () => {
      const response = await sign({
        credentialConfigId: configId,
        metadata: {
          'x-note': 'kept',
          extends: 'urn:example:base',
          name: 'Personal ID',
          schema_uri: 'https://schemas.example.com/pid.json',
        },
      })
      expect(response.statusCode).toBe(200)
      const { metadata, jws, integrity } = response.json()
      // The answer's document serialises to exactly the signed bytes, whatever order was sent.
      const { payload } = await verifyWith(jws, (await keyChain(keyChainId)).activeKey.publicJwk)
      expect(new TextDecoder().decode(payload)).toBe(JSON.stringify(metadata))
      expect(integrity).toBe(sri(JSON.stringify(metadata)))
      expect(metadata.extends).toBe('urn:example:base')
      expect(metadata.name).toBe('Personal ID')
      expect(metadata.schema_uri).toBe('https://schemas.example.com/pid.json')
      expect(metadata).not.toHaveProperty('schema')
      expect(metadata.claims).toHaveLength(3)
    })

    it('the /api/tenants/{tenantId} form works for the tenant’s client and for an operator', async () => {
      const operator = await h.createClient(null, ['tenant:manage', 'issuance:config'])
      for (const client of [admin, operator]) {
        const response = await post(
          `/api/tenants/${h.tenantA}/schema-metadata/sign`,
          { credentialConfigId: configId },
          client,
        )
        expect(response.statusCode).toBe(200)
        expect(response.json().keyChainId).toBe(keyChainId)
      }
    })

    it('signs through the Vault transit provider for a vault key chain', async () => {
      const id = random('vault')
      const key = await vault.addKey(`sm-${id}`)
      const created = await post('/api/key-chains', {
        source: 'external',
        id,
        kmsProvider: 'vault',
        externalKeyId: `sm-${id}`,
      })
      expect(created.statusCode).toBe(201)
      const before = vault.requests.length
      const response = await sign({ credentialConfigId: configId, keyChainId: id })
      expect(response.statusCode).toBe(200)
      const { header } = await verifyWith(response.json().jws, key.publicJwk as JWK)
      expect(header.x5c).toBeUndefined() // no certificate registered for this key
      expect(vault.requests.slice(before).some((r) => r.url === `/v1/transit/sign/sm-${id}`)).toBe(true)

      // Vault unreachable: an upstream failure (502), not the caller's fault. Last use of the vault.
      await vault.close()
      const down = await sign({ credentialConfigId: configId, keyChainId: id })
      expect(down.statusCode).toBe(502)
      expect(down.json().code).toBe('upstream_failure')
    })
  })

  describe('versions', () => {
    it('sign-version chains versions: each greater than the last, naming its integrity', async () => {
      const vct = `urn:example:versioned:${random('v')}`
      const document = (name: string) => ({ metadata: { vct, name }, keyChainId })
      const chain = await keyChain(keyChainId)

      const first = await signVersion({ ...document('v1'), version: '1.0.0' })
      expect(first.statusCode).toBe(201)
      expect(first.json()).toMatchObject({ version: '1.0.0', previousVersion: null, previousIntegrity: null })
      expect(first.json().metadata).toStrictEqual({ vct, name: 'v1', version: '1.0.0' })

      const second = await signVersion({
        ...document('v1.1'),
        version: '1.1.0',
        previousIntegrity: first.json().integrity,
      })
      expect(second.statusCode).toBe(201)
      expect(second.json()).toMatchObject({
        version: '1.1.0',
        previousVersion: '1.0.0',
        previousIntegrity: first.json().integrity,
      })
      // The version and its predecessor are part of the signed document and of its integrity.
      const { payload } = await verifyWith(second.json().jws, chain.activeKey.publicJwk)
      expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual({
        vct,
        name: 'v1.1',
        version: '1.1.0',
        'previous#integrity': first.json().integrity,
      })
      expect(second.json().integrity).toBe(sri(payload))

      const head = second.json().integrity
      for (const version of ['1.1.0', '1.0.9', '1.1.0+build.5', '1.1.0-rc.1']) {
        const refused = await signVersion({ ...document('x'), version, previousIntegrity: head })
        expect(refused.statusCode, version).toBe(409)
        expect(refused.json().code).toBe('conflict')
      }
      // A stale or missing predecessor is refused, whatever the version.
      for (const previousIntegrity of [first.json().integrity, undefined]) {
        const refused = await signVersion({ ...document('x'), version: '9.0.0', previousIntegrity })
        expect(refused.statusCode).toBe(409)
      }

      // semver.org §11: a pre-release of a higher version is higher; its release is higher still.
      const rc = await signVersion({ ...document('rc'), version: '1.2.0-rc.1', previousIntegrity: head })
      expect(rc.statusCode).toBe(201)
      const release = await signVersion({
        ...document('1.2'),
        version: '1.2.0',
        previousIntegrity: rc.json().integrity,
      })
      expect(release.statusCode).toBe(201)
      const late = await signVersion({
        ...document('rc2'),
        version: '1.2.0-rc.2',
        previousIntegrity: release.json().integrity,
      })
      expect(late.statusCode).toBe(409)
    })

    it('two versions signed at once on the same head: one is recorded, the other is a conflict', async () => {
      const vct = `urn:example:race:${random('v')}`
      const first = await signVersion({ metadata: { vct }, keyChainId, version: '1.0.0' })
      const next = (version: string) =>
        signVersion({ metadata: { vct }, keyChainId, version, previousIntegrity: first.json().integrity })
      const answers = await Promise.all([next('1.1.0'), next('2.0.0')])
      expect(answers.map((a) => a.statusCode).sort()).toStrictEqual([201, 409])
    })

    it('each tenant has its own chain for a vct; a configuration version uses its vct', async () => {
      const vct = `urn:example:shared:${random('v')}`
      expect((await signVersion({ metadata: { vct }, keyChainId, version: '3.0.0' })).statusCode).toBe(201)
      const b = await signVersion(
        { metadata: { vct }, keyChainId: otherKeyChainId, version: '1.0.0' },
        adminB,
      )
      expect(b.statusCode).toBe(201)
      expect(b.json().previousVersion).toBeNull()

      const fromConfig = await signVersion({ credentialConfigId: configId, version: '1.0.0' })
      expect(fromConfig.statusCode).toBe(201)
      expect(fromConfig.json().metadata.vct).toBe(`https://credentials.example.com/types/${configId}`)
    })
  })

  describe('error', () => {
    const problem = (response: { statusCode: number; json(): { code: string; errors?: unknown } }) => ({
      status: response.statusCode,
      code: response.json().code,
      paths: ((response.json().errors ?? []) as { path: string }[]).map((e) => e.path),
    })

    it('an invalid body is a 400 problem naming each field', async () => {
      expect(problem(await sign({}))).toStrictEqual({
        status: 400,
        code: 'invalid_input',
        paths: ['body.metadata'],
      })
      expect(problem(await sign({ metadata: { vct: 'urn:x' } }))).toStrictEqual({
        status: 400,
        code: 'invalid_input',
        paths: ['body.keyChainId'],
      })
      expect(problem(await sign({ metadata: { name: 'no vct' }, keyChainId }))).toStrictEqual({
        status: 400,
        code: 'invalid_input',
        paths: ['body.metadata.vct'],
      })
      const bad = await sign({
        metadata: { vct: '', claims: [{ path: [] }], 'extends#integrity': 'md5-x' },
        keyChainId,
      })
      expect(problem(bad)).toMatchObject({ status: 400, code: 'invalid_input' })
      expect(problem(bad).paths.sort()).toStrictEqual([
        'body.metadata.claims.0.path',
        'body.metadata.extends#integrity',
        'body.metadata.vct',
      ])
      expect(problem(await sign({ credentialConfigId: configId, keyId: 'old' }))).toMatchObject({
        status: 400,
        code: 'invalid_input',
      })
      expect(
        problem(
          await sign({ metadata: { vct: 'urn:x', schema: {}, schema_uri: 'https://s.test/x' }, keyChainId }),
        ),
      ).toStrictEqual({ status: 400, code: 'invalid_input', paths: ['body.metadata.schema_uri'] })
      expect(
        problem(await sign({ credentialConfigId: configId, metadata: { vct: 'urn:other' } })),
      ).toStrictEqual({
        status: 400,
        code: 'invalid_input',
        paths: ['body.metadata.vct'],
      })
      expect(
        problem(
          await signVersion({ metadata: { vct: 'urn:x', version: '2.0.0' }, keyChainId, version: '1.0.0' }),
        ),
      ).toStrictEqual({ status: 400, code: 'invalid_input', paths: ['body.metadata.version'] })
      expect(problem(await signVersion({ credentialConfigId: configId, version: '1.0' }))).toStrictEqual({
        status: 400,
        code: 'invalid_input',
        paths: ['body.version'],
      })
    })

    it('an mso_mdoc configuration has no type metadata: 422', async () => {
      const id = random('mdl')
      // ISO 18013-5 Annex B: an mso_mdoc key chain names a country.
      const mdocChain = (
        await post('/api/key-chains', { source: 'generate', certificate: { country: 'DE' } })
      ).json()
      const created = await post('/api/credentials', {
        id,
        config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
        keyChainId: mdocChain.id,
        fields: [{ path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' }],
      })
      expect(created.statusCode).toBe(201)
      expect(problem(await sign({ credentialConfigId: id }))).toStrictEqual({
        status: 422,
        code: 'rule_violation',
        paths: ['body.credentialConfigId'],
      })
    })

    it('spec §9.2: the 4.x paths under /api/issuer/credentials/schema-metadata are gone (404)', async () => {
      for (const path of ['sign', 'sign-version']) {
        const response = await post(`/api/issuer/credentials/schema-metadata/${path}`, {
          credentialConfigId: configId,
          version: '1.0.0',
        })
        expect(response.statusCode).toBe(404)
        expect(response.json().code).toBe('route_not_found')
      }
    })
  })

  describe('security', () => {
    it('an unknown configuration, or another tenant’s configuration or key chain, is 404', async () => {
      for (const body of [
        { credentialConfigId: 'no-such-config' },
        { credentialConfigId: otherConfigId },
        { credentialConfigId: configId, keyChainId: otherKeyChainId },
        { metadata: { vct: 'urn:x' }, keyChainId: otherKeyChainId },
      ]) {
        for (const response of [await sign(body), await signVersion({ ...body, version: '1.0.0' })]) {
          expect(response.statusCode, JSON.stringify(body)).toBe(404)
          expect(response.json().code).toBe('not_found')
        }
      }
      const otherTenant = await post(`/api/tenants/${h.tenantB}/schema-metadata/sign`, {
        credentialConfigId: otherConfigId,
      })
      expect(otherTenant.statusCode).toBe(404)
    })

    it('spec §5 rule 4: signing needs issuance:config (403 without it)', async () => {
      const client = await h.createClient(h.tenantA, ['issuance:offer', 'key:manage', 'key:read'])
      for (const response of [
        await sign({ credentialConfigId: configId }, client),
        await signVersion({ credentialConfigId: configId, version: '1.0.0' }, client),
      ]) {
        expect(response.statusCode).toBe(403)
        expect(response.json().code).toBe('forbidden')
      }
    })
  })
})
