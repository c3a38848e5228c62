import { createHash } from 'node:crypto'
import { testDatabases } from '@credential-service/db-schema/testing'
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, seedTenants, type TestClient } from './harness'

// Issue 23 item 8: the peer product (EUDIPLO) sends `config` as TS11 schema metadata to
// POST …/schema-metadata/sign (spec §4 notes 1 and 5: experimental, body "as before 5.0"). Both
// forms are accepted; this file covers the peer's, schema-metadata.test.ts ours.

const sri = (bytes: Uint8Array) => `sha256-${createHash('sha256').update(bytes).digest('base64')}`

const ts11 = (extra: Record<string, unknown> = {}) => ({
  version: '1.0.0',
  rulebookURI: 'https://rulebooks.example.com/pid/1.0.0.md',
  attestationLoS: 'iso_18045_high',
  bindingType: 'key',
  ...extra,
})

describe.each(testDatabases())('TS11 schema metadata (the peer form) on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  let keyChainId: string
  let sdJwt: string
  let mdoc: string

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    admin = await h.createClient(h.tenantA, ['issuance:config', 'key:manage'])
    keyChainId = (
      await post('/api/key-chains', { source: 'generate', certificate: { country: 'DE' } })
    ).json().id
    sdJwt = random('pid')
    mdoc = random('mdl')
    const created = await Promise.all([
      post('/api/credentials', {
        id: sdJwt,
        config: { format: 'dc+sd-jwt', vct: 'urn:eudi:pid:de:1' },
        fields: [{ path: ['given_name'], type: 'string' }],
        keyChainId,
      }),
      post('/api/credentials', {
        id: mdoc,
        config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
        fields: [{ path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' }],
        keyChainId,
      }),
    ])
    expect(created.map((r) => r.statusCode)).toStrictEqual([201, 201])
  })
  afterAll(() => h.close())

  function post(url: string, payload: unknown, client = admin) {
    return h.app.inject({ method: 'POST', url, headers: client.auth, payload: payload as object })
  }
  const sign = (payload: unknown, client = admin) => post('/api/schema-metadata/sign', payload, client)

  it('signs the TS11 document with the configuration’s key chain: attestation-schema+jwt, kid and x5c; payload = schemaMeta byte for byte, integrity its SRI', async () => {
    const response = await sign({
      config: ts11({
        schemaURIs: [
          { uri: 'https://schemas.example.com/pid.json' },
          { credentialConfigId: mdoc, uri: 'https://schemas.example.com/mdl.cddl' },
          { format: 'dc+sd-jwt', uri: 'https://schemas.example.com/x.json', metadata: { vct: 'urn:x' } },
        ],
        trustedAuthorities: [
          { frameworkType: 'etsi_tl', value: 'https://tl.example.eu/lotl.xml', isLoTE: true },
        ],
      }),
      credentialConfigId: sdJwt,
    })
    expect(response.statusCode, response.body).toBe(200)
    const answer = response.json()
    expect(answer.keyChainId).toBe(keyChainId)
    expect(answer.schemaMeta).toStrictEqual({
      version: '1.0.0',
      rulebookURI: 'https://rulebooks.example.com/pid/1.0.0.md',
      attestationLoS: 'iso_18045_high',
      bindingType: 'key',
      schemaURIs: [
        // From the body's configuration, from the entry's, and as given.
        {
          format: 'dc+sd-jwt',
          uri: 'https://schemas.example.com/pid.json',
          metadata: { vct: 'urn:eudi:pid:de:1' },
        },
        {
          format: 'mso_mdoc',
          uri: 'https://schemas.example.com/mdl.cddl',
          metadata: { doctype: 'org.iso.18013.5.1.mDL' },
        },
        { format: 'dc+sd-jwt', uri: 'https://schemas.example.com/x.json', metadata: { vct: 'urn:x' } },
      ],
      trustedAuthorities: [
        { frameworkType: 'etsi_tl', value: 'https://tl.example.eu/lotl.xml', isLoTE: true },
      ],
      iat: Math.floor(new Date(answer.signedAt).getTime() / 1000),
    })

    const chain = (await h.app.inject({ url: `/api/key-chains/${keyChainId}`, headers: admin.auth })).json()
    const header = decodeProtectedHeader(answer.jws)
    const { payload } = await compactVerify(
      answer.jws,
      await importJWK(chain.activeKey.publicJwk as JWK, header.alg as string),
    )
    expect(header).toMatchObject({ alg: 'ES256', typ: 'attestation-schema+jwt', kid: chain.activeKey.kid })
    expect(header.x5c).toHaveLength(1)
    expect(new TextDecoder().decode(payload)).toBe(JSON.stringify(answer.schemaMeta))
    expect(answer.integrity).toBe(sri(payload))
  })

  it('without keyChainId or configuration, the tenant’s default key chain signs; a tenant without one is a 422 naming body.keyChainId', async () => {
    const tenant = random('ts11')
    await seedTenants(h.app, h.root.auth, [tenant])
    const client = await h.createClient(tenant, ['issuance:config', 'key:manage'])
    const refused = await sign({ config: ts11() }, client)
    expect(refused.statusCode).toBe(422)
    expect(refused.json().errors).toStrictEqual([
      {
        path: 'body.keyChainId',
        message: 'required: no credentialConfigId names one and the tenant has no default key chain',
      },
    ])
    // A configuration without keyChainId makes the default; the TS11 form then signs with it.
    await post(
      '/api/credentials',
      { id: 'x', config: { format: 'dc+sd-jwt', vct: 'urn:x' }, fields: [{ path: ['a'], type: 'string' }] },
      client,
    )
    const signed = await sign({ config: ts11({ id: 'https://catalog.example.eu/attestations/x' }) }, client)
    expect(signed.statusCode, signed.body).toBe(200)
    expect(signed.json().keyChainId).toBe('default')
    expect(signed.json().schemaMeta.id).toBe('https://catalog.example.eu/attestations/x')
  })

  it('what cannot be signed is refused, each field named: both forms at once (400), unknown members (400), trust list references and missing schema URIs or formats (422); sign-version refuses the TS11 form (400)', async () => {
    const both = await sign({ config: ts11(), metadata: { vct: 'urn:x' }, keyChainId })
    expect(both.statusCode).toBe(400)
    expect(both.json().errors.map((e: { path: string }) => e.path)).toStrictEqual(['body.config'])

    const unknown = await sign({ config: ts11({ rulebookIntegrity: 'sha256-x' }), keyChainId })
    expect(unknown.statusCode).toBe(400)
    expect(JSON.stringify(unknown.json().errors)).toContain('rulebookIntegrity')

    const incomplete = await sign({
      config: ts11({
        schemaURIs: [{ credentialConfigId: sdJwt }, { uri: 'https://schemas.example.com/y.json' }],
        trustedAuthorities: [{ trustListId: 'tl-1' }, { isLoTE: true }],
      }),
      keyChainId,
    })
    expect(incomplete.statusCode).toBe(422)
    expect(incomplete.json().errors.map((e: { path: string }) => e.path)).toStrictEqual([
      'body.config.schemaURIs.0.uri',
      'body.config.schemaURIs.1.format',
      'body.config.trustedAuthorities.0.trustListId',
      'body.config.trustedAuthorities.1',
    ])

    const missing = await sign({ config: ts11(), credentialConfigId: 'nope' })
    expect(missing.statusCode).toBe(404)

    const version = await post('/api/schema-metadata/sign-version', {
      config: ts11(),
      keyChainId,
      version: '1.0.0',
      metadata: { vct: 'urn:y' },
    })
    expect(version.statusCode).toBe(400)
    expect(version.json().errors).toStrictEqual([
      {
        path: 'body.config',
        message:
          'the TS11 form (`config`) is signed by /schema-metadata/sign; sign-version chains SD-JWT VC type metadata versions',
      },
    ])
  })
})
