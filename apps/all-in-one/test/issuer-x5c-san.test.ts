import { X509Certificate } from 'node:crypto'
import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOne, tenantAdmin } from './harness'
import { issueOverHttp } from './wallet'

/** SAN entries of an `x5c` leaf as node:crypto reads them, e.g. `['DNS:host', 'URI:https://…']`. */
const sanOf = (x5cLeaf: string) =>
  (new X509Certificate(Buffer.from(x5cLeaf, 'base64')).subjectAltName ?? '').split(', ').filter(Boolean)

describe('SD-JWT VC §3.5 (checklist S-131): the iss of an issued SD-JWT VC is a SAN of its x5c leaf', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  const logLines: string[] = []
  const tenant = `san-${crypto.randomUUID().slice(0, 8)}`

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    // Seeded over HTTP on purpose (no world): the key chain kinds, an imported one too, are the subject.
    const started = await startAllInOne(
      testDatabases().at(-1) as TestDatabase,
      baseUrl,
      {},
      undefined,
      logLines,
    )
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    ;({ admin: auth } = await tenantAdmin(app, started, tenant, [
      'key:manage',
      'issuance:config',
      'issuance:offer',
    ]))
    // An operator's chain whose leaf names no issuer, as chains made before the SAN was added.
    const pair = await generateKeyPair('ES256')
    const given = await createCertificate({
      subjectPublicJwk: pair.publicJwk,
      issuerPrivateJwk: pair.privateJwk,
      subject: 'CN=Given',
      validityDays: 30,
    })
    for (const [id, chain] of [
      ['self-signed', { source: 'generate', certificate: { mode: 'self-signed' } }],
      ['internal-ca', { source: 'generate', certificate: { mode: 'internal-ca' } }],
      ['given', { source: 'import', privateKey: pair.privateJwk, certificateChain: [given] }],
    ] as const) {
      const created = await app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: auth,
        payload: { id, ...chain },
      })
      expect(created.statusCode, created.body).toBe(201)
      const config = await app.inject({
        method: 'POST',
        url: '/api/credentials',
        headers: auth,
        payload: {
          id,
          config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
          keyChainId: id,
          fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
        },
      })
      expect(config.statusCode, config.body).toBe(201)
    }
  })
  afterAll(() => app?.close())

  /** A credential of `configurationId` issued over HTTP: its `iss` and the SAN of its x5c leaf. */
  async function issued(configurationId: string) {
    const { credential } = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId,
      claims: { given_name: 'Erika' },
    })
    const jwt = credential.split('~')[0] as string
    const x5c = decodeProtectedHeader(jwt).x5c as string[]
    return { iss: decodeJwt(jwt).iss as string, san: sanOf(x5c[0] as string) }
  }

  for (const id of ['self-signed', 'internal-ca']) {
    it(`S-131 / SD-JWT VC §3.5: the leaf of a key chain made ${id} has iss as SAN URI and its host as SAN dNSName, before and after rotation`, async () => {
      const before = await issued(id)
      expect(before.iss).toBe(`${baseUrl}/issuers/${tenant}`)
      expect(before.san).toStrictEqual(['IP Address:127.0.0.1', 'DNS:127.0.0.1', `URI:${before.iss}`])
      const rotated = await app.inject({ method: 'POST', url: `/api/key-chains/${id}/rotate`, headers: auth })
      expect(rotated.statusCode, rotated.body).toBe(200)
      expect((await issued(id)).san).toStrictEqual([
        'IP Address:127.0.0.1',
        'DNS:127.0.0.1',
        `URI:${before.iss}`,
      ])
    })
  }

  it('S-131: a leaf that does not name the issuer still signs, and the issuer warns once for it', async () => {
    const warning = (line: string) =>
      line.includes('"expectedSanUri"') && line.includes('"keyChainId":"given"')
    const first = await issued('given')
    expect(first.san).toStrictEqual([])
    await issued('given')
    const warnings = logLines.filter(warning).map((line) => JSON.parse(line))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ level: 40, tenantId: tenant, expectedSanUri: first.iss })
    // Chains that name the issuer are not warned about.
    expect(logLines.filter((line) => line.includes('"expectedSanUri"'))).toHaveLength(1)
  })
})
