import 'reflect-metadata'
import { webcrypto } from 'node:crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  AuthorityKeyIdentifierExtension,
  CRLDistributionPointsExtension,
  SubjectKeyIdentifierExtension,
  X509Certificate,
  X509Crl,
} from '@peculiar/x509'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllInOne, tenantAdmin } from './harness'

const PUBLIC_URL = 'https://credentials.example.com'

describe.each(testDatabases())(
  'CRL distribution points of internal-CA key chains on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let admin: Record<string, string>
    const tenant = `crl-${crypto.randomUUID().slice(0, 8)}`
    const create = async (payload: object) => {
      const response = await app.inject({ method: 'POST', url: '/api/key-chains', headers: admin, payload })
      expect(response.statusCode, response.body).toBe(201)
      return response.json()
    }

    beforeAll(async () => {
      // Seeded over HTTP on purpose (no world): each test checks the key chain the API creates.
      const started = await startAllInOne(testDatabase as TestDatabase, PUBLIC_URL)
      app = started.app
      await app.ready()
      ;({ admin } = await tenantAdmin(app, started, tenant, ['key:manage']))
    })
    afterAll(() => app.close())

    it('ISO 18013-5 B.1, RFC 5280 §5: an internal CA’s leaf names the issuer’s CRL URL; the URL serves a CRL signed by the root, empty, with nextUpdate; a rotated leaf names it too', async () => {
      const chain = await create({
        source: 'generate',
        id: 'mdl-keys',
        certificate: { mode: 'internal-ca', subject: 'CN=ACME mDL Issuer', country: 'DE' },
      })
      const root = new X509Certificate(chain.rootCertificate)
      const leaf = new X509Certificate(chain.activeKey.certificateChain[0])
      const uri = `${PUBLIC_URL}/issuers/${tenant}/crl/mdl-keys`
      const points = leaf.getExtension(CRLDistributionPointsExtension)
      expect(
        points?.distributionPoints.map((p) =>
          String(p.distributionPoint?.fullName?.[0]?.uniformResourceIdentifier),
        ),
      ).toEqual([uri])

      const response = await app.inject({ url: new URL(uri).pathname })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('application/pkix-crl')
      expect(response.headers['cache-control']).toMatch(/^public, max-age=(3[0-5]\d\d|3600)$/)
      const crl = new X509Crl(new Uint8Array(response.rawPayload))
      expect(crl.issuer).toBe(root.subject)
      expect(crl.entries).toStrictEqual([])
      expect(crl.nextUpdate?.getTime()).toBeGreaterThan(Date.now())
      expect(await crl.verify({ publicKey: root.publicKey }, webcrypto)).toBe(true)
      // Not signed by the leaf: only the CA's key makes it valid.
      expect(await crl.verify({ publicKey: leaf.publicKey }, webcrypto)).toBe(false)

      const rotated = (
        await app.inject({ method: 'POST', url: '/api/key-chains/mdl-keys/rotate', headers: admin })
      ).json()
      const next = new X509Certificate(rotated.activeKey.certificateChain[0])
      expect(
        next.getExtension(CRLDistributionPointsExtension)?.distributionPoints[0]?.distributionPoint
          ?.fullName?.[0]?.uniformResourceIdentifier,
      ).toBe(uri)
    })

    it('RFC 5280 §5.2.1, §5.2.3: the CRL names the root’s key (AKI = the root’s SKI) and has a CRL Number; it is signed once and served again, byte for byte, with an ETag', async () => {
      const chain = await create({
        source: 'generate',
        id: 'numbered-keys',
        certificate: { mode: 'internal-ca', subject: 'CN=ACME Numbered Issuer', country: 'DE' },
      })
      const root = new X509Certificate(chain.rootCertificate)
      const url = `/issuers/${tenant}/crl/numbered-keys`
      const first = await app.inject({ url })
      expect(first.statusCode).toBe(200)
      const crl = new X509Crl(new Uint8Array(first.rawPayload))
      const aki = crl.getExtension(AuthorityKeyIdentifierExtension)
      expect(aki?.keyId).toBeTruthy()
      expect(aki?.keyId).toBe(root.getExtension(SubjectKeyIdentifierExtension)?.keyId)
      // CRLNumber ::= INTEGER: the seconds of thisUpdate, so a later CRL has a larger one.
      const number = crl.getExtension('2.5.29.20')
      expect(number?.critical).toBe(false)
      const der = Buffer.from(number?.value as ArrayBuffer)
      expect(der[0]).toBe(0x02)
      expect(der.readUIntBE(2, der[1] as number)).toBe(Math.floor(crl.thisUpdate.getTime() / 1000))

      const etag = first.headers.etag as string
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
      const second = await app.inject({ url })
      expect(second.rawPayload.equals(first.rawPayload)).toBe(true)
      expect(second.headers.etag).toBe(etag)
      const unchanged = await app.inject({ url, headers: { 'if-none-match': etag } })
      expect(unchanged.statusCode).toBe(304)
      expect(unchanged.body).toBe('')
    })

    it('the default key chain (internal CA, F-02) has a CRL distribution point where the issuer serves its root’s CRL', async () => {
      const chain = await create({ source: 'generate', id: 'default-keys' })
      expect(chain.certificateMode).toBe('internal-ca')
      const leaf = new X509Certificate(chain.activeKey.certificateChain[0])
      const url = `${PUBLIC_URL}/issuers/${tenant}/crl/default-keys`
      const points = leaf.getExtension(CRLDistributionPointsExtension)?.distributionPoints
      expect(
        points?.map((p) => String(p.distributionPoint?.fullName?.[0]?.uniformResourceIdentifier)),
      ).toEqual([url])
      const response = await app.inject({ url: new URL(url).pathname })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('application/pkix-crl')
      const crl = new X509Crl(new Uint8Array(response.rawPayload))
      expect(crl.issuer).toBe(new X509Certificate(chain.rootCertificate).subject)
      expect(
        await crl.verify({ publicKey: new X509Certificate(chain.rootCertificate).publicKey }, webcrypto),
      ).toBe(true)
    })

    it('a self-signed key chain has no CRL distribution point and no CRL (404); neither has an unknown one or another tenant’s', async () => {
      const chain = await create({
        source: 'generate',
        id: 'plain-keys',
        certificate: { mode: 'self-signed' },
      })
      const leaf = new X509Certificate(chain.activeKey.certificateChain[0])
      expect(leaf.getExtension(CRLDistributionPointsExtension)).toBeNull()
      expect((await app.inject({ url: `/issuers/${tenant}/crl/plain-keys` })).statusCode).toBe(404)
      expect((await app.inject({ url: `/issuers/${tenant}/crl/unknown` })).statusCode).toBe(404)
      expect((await app.inject({ url: `/issuers/other-${tenant}/crl/mdl-keys` })).statusCode).toBe(404)
    })
  },
)
