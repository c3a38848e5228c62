import { X509Certificate } from 'node:crypto'
import { MDL_DOCUMENT_SIGNER_EKU } from '@credential-service/crypto'
import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

// Issue 23 item 8: the spec's minimal credential configuration body (§2.1: `id`, `config`,
// `fields`) names no key chain; the tenant's default signing key chain signs it.
const minimal = (id: string) => ({
  id,
  config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
  fields: [{ path: ['name'], type: 'string', mandatory: true, disclosable: true }],
})
const minimalMdoc = (id: string) => ({
  id,
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  fields: [{ path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' }],
})

describe.each(testDatabases())('default signing key chain on $name', (testDatabase) => {
  let h: Harness

  beforeAll(async () => {
    h = await createHarness(testDatabase)
  })
  afterAll(() => h.close())

  /** A new tenant (no key chain at all) and a client of it that configures and manages keys. */
  async function freshTenant(settings: object = {}): Promise<{ tenant: string; admin: TestClient }> {
    const tenant = random('dk')
    const created = await h.app.inject({
      method: 'POST',
      url: '/api/tenants',
      headers: h.root.auth,
      payload: { id: tenant, name: tenant, ...settings },
    })
    expect(created.statusCode, created.body).toBe(201)
    const admin = await h.createClient(tenant, ['issuance:config', 'key:manage'])
    return { tenant, admin }
  }
  const post = (url: string, client: TestClient, payload: object) =>
    h.app.inject({ method: 'POST', url, headers: client.auth, payload })
  const keyChainIds = async (client: TestClient) =>
    (await h.app.inject({ url: '/api/key-chains', headers: client.auth }))
      .json()
      .items.map((k: { id: string }) => k.id)
  const tenantOf = async (tenant: string) =>
    (await h.app.inject({ url: `/api/tenants/${tenant}`, headers: h.root.auth })).json()

  it('spec §2.1 minimal body: created on first need with the `source: generate` defaults, named in X-Default-Key-Chain and keyChainId; reused after', async () => {
    const { tenant, admin } = await freshTenant()
    expect((await tenantOf(tenant)).defaultKeyChainId).toBeNull()

    const first = await post('/api/credentials', admin, minimal('employee'))
    expect(first.statusCode).toBe(201)
    expect(first.headers['x-default-key-chain']).toBe('default')
    expect(first.json().keyChainId).toBe('default')
    expect((await tenantOf(tenant)).defaultKeyChainId).toBe('default')

    // The profile of POST /api/key-chains {"source":"generate"}: ES256, a leaf issued by a root.
    const chain = (await h.app.inject({ url: '/api/key-chains/default', headers: admin.auth })).json()
    expect(chain).toMatchObject({ kmsProvider: 'db', algorithm: 'ES256', certificateMode: 'internal-ca' })
    expect(chain.rootCertificate).toContain('BEGIN CERTIFICATE')
    expect(chain.activeKey.certificateChain).toHaveLength(1)
    // Audited as made by the client whose configuration needed it.
    const audit = (
      await h.app.inject({ url: `/api/tenants/${tenant}/audit-events`, headers: h.root.auth })
    ).json()
    expect(audit.items.filter((e: { resourceType: string }) => e.resourceType === 'key-chain')).toMatchObject(
      [{ action: 'create', resourceId: 'default', actorClientId: admin.clientId }],
    )

    const second = await post('/api/credentials', admin, minimal('visitor'))
    expect(second.statusCode).toBe(201)
    expect(second.headers['x-default-key-chain']).toBe('default')
    expect(second.json().keyChainId).toBe('default')
    expect(await keyChainIds(admin)).toStrictEqual(['default'])
  })

  it('a named keyChainId gets no header; a replace without keyChainId keeps the stored key chain', async () => {
    const { admin } = await freshTenant()
    const own = (await post('/api/key-chains', admin, { source: 'generate', id: 'own' })).json().id
    const named = await post('/api/credentials', admin, { ...minimal('named'), keyChainId: own })
    expect(named.statusCode).toBe(201)
    expect(named.headers['x-default-key-chain']).toBeUndefined()

    const replaced = await h.app.inject({
      method: 'PUT',
      url: '/api/credentials/named',
      headers: admin.auth,
      payload: minimal('named'),
    })
    expect(replaced.statusCode).toBe(200)
    expect(replaced.json().keyChainId).toBe(own)
    // No default was needed, so none was made.
    expect(await keyChainIds(admin)).toStrictEqual([own])
  })

  it('PATCH /api/tenants/{id} defaultKeyChainId: another key chain becomes the default; an unknown one is a 422 naming it; null clears it', async () => {
    const { tenant, admin } = await freshTenant()
    const patch = (payload: object) =>
      h.app.inject({ method: 'PATCH', url: `/api/tenants/${tenant}`, headers: h.root.auth, payload })
    const unknown = await patch({ defaultKeyChainId: 'missing' })
    expect(unknown.statusCode).toBe(422)
    expect(unknown.json().errors).toStrictEqual([
      { path: 'body.defaultKeyChainId', message: "no key chain 'missing' in this tenant" },
    ])

    const mdocKeys = (
      await post('/api/key-chains', admin, {
        source: 'generate',
        id: 'mdoc-keys',
        certificate: { country: 'DE' },
      })
    ).json().id
    const set = await patch({ defaultKeyChainId: mdocKeys })
    expect(set.statusCode).toBe(200)
    expect(set.json().defaultKeyChainId).toBe(mdocKeys)

    // ISO 18013-5 Annex B.1: a default whose certificates name a country signs mso_mdoc too.
    const mdoc = await post('/api/credentials', admin, minimalMdoc('mdl'))
    expect(mdoc.statusCode).toBe(201)
    expect(mdoc.headers['x-default-key-chain']).toBe(mdocKeys)
    expect(mdoc.json().keyChainId).toBe(mdocKeys)

    const cleared = await patch({ defaultKeyChainId: null })
    expect(cleared.statusCode).toBe(200)
    expect(cleared.json().defaultKeyChainId).toBeNull()
    // The next configuration without keyChainId makes a new default.
    const next = await post('/api/credentials', admin, minimal('after-clear'))
    expect(next.json().keyChainId).toBe('default')
    expect((await tenantOf(tenant)).defaultKeyChainId).toBe('default')
  })

  it('issue 43, spec §2.1–2.3 minimal bodies on a fresh tenant that states its country: mso_mdoc and dc+sd-jwt answer 201; the default key chain names it (C=) in the leaf subject and issuer, a document signer (ISO 18013-5 Annex B.1, S-132)', async () => {
    // §2.1: "id | string | yes", "config | object | yes", "fields | array of field definitions | yes";
    // §2.2: "format | string | Value `mso_mdoc` is shown", docType, display ({name, locale});
    // §2.3: path, type, and "namespace | string | mDOC only".
    const { tenant, admin } = await freshTenant({ country: 'DE' })
    expect((await tenantOf(tenant)).country).toBe('DE')
    const mdoc = await post('/api/credentials', admin, {
      ...minimalMdoc('mdl'),
      config: { ...minimalMdoc('mdl').config, display: [{ name: 'Driving licence', locale: 'en-US' }] },
    })
    expect(mdoc.statusCode, mdoc.body).toBe(201)
    expect(mdoc.headers['x-default-key-chain']).toBe('default')
    const sdJwt = await post('/api/credentials', admin, minimal('employee'))
    expect(sdJwt.statusCode, sdJwt.body).toBe(201)
    expect(sdJwt.json().keyChainId).toBe('default')
    expect(await keyChainIds(admin)).toStrictEqual(['default'])

    const chain = (await h.app.inject({ url: '/api/key-chains/default', headers: admin.auth })).json()
    const leaf = new X509Certificate(chain.activeKey.certificateChain[0])
    expect(leaf.subject.split('\n')).toContain('C=DE')
    expect(leaf.issuer.split('\n')).toContain('C=DE')
    expect(leaf.keyUsage).toContain(MDL_DOCUMENT_SIGNER_EKU)
    expect(new X509Certificate(chain.rootCertificate).subject.split('\n')).toContain('C=DE')
  })

  it('issue 43, ISO 18013-5 Annex B.1: a minimal mso_mdoc body on a tenant that states no country is a 422 naming body.keyChainId and the fix, with nothing created; once the country is set, the same body answers 201', async () => {
    const { tenant, admin } = await freshTenant()
    const response = await post('/api/credentials', admin, minimalMdoc('mdl'))
    expect(response.statusCode).toBe(422)
    expect(response.json().errors).toStrictEqual([
      {
        path: 'body.keyChainId',
        message: `mso_mdoc needs a country (C=) in the certificate subject and issuer (ISO 18013-5 Annex B.1), and the tenant states no country for its default key chain: set it (\`country\` in PATCH /api/tenants/${tenant} or tenant.json, ISO 3166-1 alpha-2, e.g. {"country": "DE"}) and try again, or name in \`keyChainId\` a key chain made with \`certificate.country\` (nothing was created)`,
      },
    ])
    expect(await keyChainIds(admin)).toStrictEqual([])
    expect((await tenantOf(tenant)).defaultKeyChainId).toBeNull()

    const patched = await h.app.inject({
      method: 'PATCH',
      url: `/api/tenants/${tenant}`,
      headers: h.root.auth,
      payload: { country: 'AT' },
    })
    expect(patched.statusCode).toBe(200)
    const again = await post('/api/credentials', admin, minimalMdoc('mdl'))
    expect(again.statusCode, again.body).toBe(201)
    const chain = (await h.app.inject({ url: '/api/key-chains/default', headers: admin.auth })).json()
    expect(new X509Certificate(chain.activeKey.certificateChain[0]).subject.split('\n')).toContain('C=AT')
  })

  it('issue 43: a default key chain made before the tenant stated a country keeps its certificates; a minimal mso_mdoc body then is a 422 that says to name or make another default', async () => {
    const { tenant, admin } = await freshTenant()
    expect((await post('/api/credentials', admin, minimal('employee'))).statusCode).toBe(201)
    await h.app.inject({
      method: 'PATCH',
      url: `/api/tenants/${tenant}`,
      headers: h.root.auth,
      payload: { country: 'DE' },
    })
    const response = await post('/api/credentials', admin, minimalMdoc('mdl'))
    expect(response.statusCode).toBe(422)
    expect(response.json().errors).toStrictEqual([
      {
        path: 'body.keyChainId',
        message: `mso_mdoc needs a country (C=) in the certificate subject and issuer (ISO 18013-5 Annex B.1); the tenant's default key chain 'default' names none (it was made without a country): name in \`keyChainId\` a key chain made with \`certificate.country\`, or make such a key chain the default (PATCH /api/tenants/${tenant} {"defaultKeyChainId": "<id>"})`,
      },
    ])
    // A named key chain without a country: the message names that key chain.
    const own = (await post('/api/key-chains', admin, { source: 'generate', id: 'own' })).json().id
    const named = await post('/api/credentials', admin, { ...minimalMdoc('mdl'), keyChainId: own })
    expect(named.json().errors).toStrictEqual([
      {
        path: 'body.keyChainId',
        message:
          "mso_mdoc needs a country (C=) in the certificate subject and issuer (ISO 18013-5 Annex B.1); key chain 'own' has none",
      },
    ])
  })

  it('a key chain that is not the default but is called `default` keeps its id; the default gets another', async () => {
    const { tenant, admin } = await freshTenant()
    await post('/api/key-chains', admin, { source: 'generate', id: 'default' })
    const created = await post('/api/credentials', admin, minimal('x'))
    expect(created.statusCode).toBe(201)
    const id = created.json().keyChainId as string
    expect(id).toMatch(/^kc_/)
    expect((await tenantOf(tenant)).defaultKeyChainId).toBe(id)
  })

  it('race-safe: concurrent minimal creates (two app instances on PostgreSQL) make one default key chain', async () => {
    const { tenant, admin } = await freshTenant()
    // On PostgreSQL a second management app with its own connection pool stands in for a second
    // process; on the embedded database the one app serves all requests.
    const other = testDatabase.name === 'postgres' ? await createHarness(testDatabase) : undefined
    try {
      const apps = other ? [h.app, other.app] : [h.app]
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (apps[i % apps.length] ?? h.app).inject({
            method: 'POST',
            url: '/api/credentials',
            headers: admin.auth,
            payload: minimal(`c${i}`),
          }),
        ),
      )
      expect(answers.map((a) => a.statusCode)).toStrictEqual(Array(8).fill(201))
      const used = new Set(answers.map((a) => a.json().keyChainId))
      expect([...used]).toStrictEqual(['default'])
      expect(await keyChainIds(admin)).toStrictEqual(['default'])
      expect((await tenantOf(tenant)).defaultKeyChainId).toBe('default')
    } finally {
      await other?.close()
    }
  })
})
