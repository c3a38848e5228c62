import 'reflect-metadata'
import { createHash, verify, webcrypto, X509Certificate } from 'node:crypto'
import { testDatabases } from '@credential-service/db-schema/testing'
import * as x509 from '@peculiar/x509'
import { Encoder, Tag } from 'cbor-x'
import type { FastifyInstance } from 'fastify'
import { base64url } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MDL_QUERY, PID_QUERY } from './dc-api-fixtures'
import { startAllInOne, tenantAdmin } from './harness'

x509.cryptoProvider.set(webcrypto)
const ORIGIN = 'https://rp.example'
/** ISO/IEC 18013-5 Annex B: the extended key usage of an mdoc reader authentication certificate. */
const READER_AUTH_EKU = '1.0.18013.5.1.6'
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
// The holder's own CBOR (RFC 8949 preferred serialisation): maps as maps, byte strings as such.
const cbor = new Encoder({
  useRecords: false,
  tagUint8Array: false,
  mapsAsObjects: false,
  variableMapSize: true,
})

/**
 * A platform's relying-party programme, as the operator meets it: it takes a CSR and returns a
 * reader certificate (EKU 1.0.18013.5.1.6) under its own CA, which wallets trust.
 */
async function rpProgramme() {
  const caKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair
  const validity = {
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 30 * 86_400_000),
  }
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Platform RP CA,O=Example Platform',
    keys: caKeys,
    signingAlgorithm: EC,
    ...validity,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  })
  const issue = async (csrPem: string) => {
    const csr = new x509.Pkcs10CertificateRequest(csrPem)
    if (!(await csr.verify())) throw new Error('the CSR is not signed by its key')
    // The names the operator asked for (the CSR's extensionRequest), as the programme checked them.
    const san = csr.extensions.find((extension) => extension.type === '2.5.29.17')
    return x509.X509CertificateGenerator.create({
      serialNumber: '02',
      subject: csr.subject,
      issuer: ca.subject,
      publicKey: csr.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: EC,
      ...validity,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([READER_AUTH_EKU], true),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
        ...(san ? [san] : []),
      ],
    })
  }
  return { caPem: ca.toString('pem'), issue }
}

/**
 * The bytes inside #6.24 (RFC 8949 §3.4.5.1). @owf/mdoc, which the service loads into this
 * process, registers a cbor-x decoder for tag 24 (its DataItem); the bytes are the same either way.
 */
const embeddedBytes = (item: unknown): Uint8Array =>
  item instanceof Tag ? (item.value as Uint8Array) : (item as { buffer: Uint8Array }).buffer

interface AnnexCData {
  deviceRequest: string
  encryptionInfo: string
}

/**
 * The holder's check of readerAuth, written from ISO/IEC 18013-5 §9.1.4 and RFC 9052, not from a
 * library: ReaderAuthentication = ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes],
 * ReaderAuthenticationBytes = #6.24(bstr .cbor ReaderAuthentication), signed as a COSE_Sign1 with a
 * detached payload; the SessionTranscript of ISO/IEC 18013-7 C.3 for `origin`.
 * `itemsRequestBytes` stands in for the DocRequest's (a tampered request).
 */
function holderVerifiesReaderAuth(data: AnnexCData, origin: string, itemsRequestBytes?: Uint8Array) {
  const deviceRequest = cbor.decode(base64url.decode(data.deviceRequest)) as Map<string, unknown>
  const [docRequest] = deviceRequest.get('docRequests') as Map<string, unknown>[]
  const itemsRequest = embeddedBytes(docRequest?.get('itemsRequest'))
  const readerAuth = docRequest?.get('readerAuth') as [Uint8Array, Map<number, unknown>, null, Uint8Array]
  if (!readerAuth) return { present: false as const }
  const [protectedHeader, unprotected, payload, signature] = readerAuth
  const x5chain = unprotected.get(33)
  const chain = (Array.isArray(x5chain) ? x5chain : [x5chain]).map(
    (der: Uint8Array) => new X509Certificate(der),
  )
  const sessionTranscript = [
    null,
    null,
    [
      'dcapi',
      createHash('sha256')
        .update(cbor.encode([data.encryptionInfo, origin]))
        .digest(),
    ],
  ]
  const items = new Tag(itemsRequestBytes ?? itemsRequest, 24)
  const readerAuthentication = cbor.encode(['ReaderAuthentication', sessionTranscript, items])
  const sigStructure = cbor.encode([
    'Signature1',
    protectedHeader,
    new Uint8Array(0),
    cbor.encode(new Tag(readerAuthentication, 24)),
  ])
  const leaf = chain[0] as X509Certificate
  return {
    present: true as const,
    itemsRequest: cbor.decode(itemsRequest) as Map<string, unknown>,
    itemsRequestBytes: itemsRequest,
    alg: (cbor.decode(protectedHeader) as Map<number, unknown>).get(1),
    payload,
    chain,
    valid: verify('sha256', sigStructure, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, signature),
  }
}

describe.each(testDatabases())('ISO/IEC 18013-7 Annex C reader authentication on $name', (testDatabase) => {
  let app: FastifyInstance
  let admin: Record<string, string>
  let caPem: string
  let leafPem: string
  const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
    app.inject({ method, url, headers: admin, ...(payload ? { payload } : {}) })
  const annexC = async (presentationConfigId: string, origin = ORIGIN): Promise<AnnexCData> => {
    const created = await call('POST', '/api/presentation-requests', {
      presentationConfigId,
      transport: 'dc-api',
      origin,
    })
    expect(created.statusCode, created.body).toBe(201)
    const entry = created
      .json()
      .dcApi.requests.find((r: { protocol: string }) => r.protocol === 'org-iso-mdoc')
    return entry.data
  }

  beforeAll(async () => {
    const started = await startAllInOne(testDatabase, 'https://verifier.example.com')
    app = started.app
    await app.ready()
    ;({ admin } = await tenantAdmin(app, started, `rdr-${crypto.randomUUID().slice(0, 8)}`, [
      'key:manage',
      'presentation:config',
      'presentation:request',
    ]))
    // docs/presentations.md, "A reader certificate from a platform's RP programme", steps 1 to 3.
    const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=Example Verifier,C=DE',
      keys,
      signingAlgorithm: EC,
      extensions: [
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'verifier.example.com' }]),
      ],
    })
    const programme = await rpProgramme()
    caPem = programme.caPem
    leafPem = (await programme.issue(csr.toString('pem'))).toString('pem')
    const privateKey = x509.PemConverter.encode(
      await webcrypto.subtle.exportKey('pkcs8', keys.privateKey),
      'PRIVATE KEY',
    )
    const imported = await call('POST', '/api/key-chains', {
      source: 'import',
      id: 'reader',
      privateKey,
      certificateChain: [leafPem, caPem],
    })
    expect(imported.statusCode, imported.body).toBe(201)
    for (const [id, readerAuth] of [
      ['mdl-reader', true],
      ['mdl-plain', false],
    ] as const) {
      const saved = await call('POST', '/api/presentations', {
        id,
        dcqlQuery: MDL_QUERY,
        keyChainId: 'reader',
        dcApi: { protocols: ['org-iso-mdoc'], readerAuth },
      })
      expect(saved.statusCode, saved.body).toBe(201)
    }
  })
  afterAll(async () => {
    await app?.close()
  })

  it('an imported chain from an RP programme (CSR, certificate, import) keeps its certificates and signs with the CSR key', async () => {
    const chain = (await call('GET', '/api/key-chains/reader')).json()
    expect(chain.certificateMode).toBe('provided')
    const der = (pem: string) => new X509Certificate(pem).raw.toString('base64')
    expect(chain.activeKey.certificateChain.map(der)).toStrictEqual([der(leafPem), der(caPem)])
    expect(new X509Certificate(leafPem).keyUsage).toContain(READER_AUTH_EKU)
  })

  it('ISO/IEC 18013-5 §9.1.4, 18013-7 C.2: with dcApi.readerAuth the DocRequest carries readerAuth over ReaderAuthentication of this request; an independent holder verifies it against the programme CA', async () => {
    const data = await annexC('mdl-reader')
    const checked = holderVerifiesReaderAuth(data, ORIGIN)
    if (!checked.present) throw new Error('no readerAuth in the DocRequest')
    // §9.1.4, CDDL "ReaderAuth = COSE_Sign1" with a detached payload: nil here, the holder rebuilds it.
    expect(checked.payload).toBeNull()
    expect(checked.alg).toBe(-7)
    expect(checked.valid).toBe(true)
    // x5chain (RFC 9360, label 33): the key chain's certificates, the reader certificate first.
    const [leaf, ca] = checked.chain
    expect(leaf?.raw.equals(new X509Certificate(leafPem).raw)).toBe(true)
    expect(leaf?.verify(new X509Certificate(caPem).publicKey)).toBe(true)
    expect(ca?.raw.equals(new X509Certificate(caPem).raw)).toBe(true)
    expect(checked.itemsRequest.get('docType')).toBe('org.iso.18013.5.1.mDL')
  })

  it('ISO/IEC 18013-5 §9.1.4: the holder refuses readerAuth for a tampered ItemsRequest or another origin’s SessionTranscript', async () => {
    const data = await annexC('mdl-reader')
    const checked = holderVerifiesReaderAuth(data, ORIGIN)
    if (!checked.present) throw new Error('no readerAuth in the DocRequest')
    const items = checked.itemsRequest
    const nameSpaces = items.get('nameSpaces') as Map<string, Map<string, boolean>>
    // A relay asks for one more element under the verifier's signature.
    const [namespace, elements] = [...nameSpaces][0] as [string, Map<string, boolean>]
    const widened = new Map([...nameSpaces, [namespace, new Map([...elements, ['portrait', false]])]])
    const tampered = cbor.encode(new Map([...items, ['nameSpaces', widened]]))
    expect(holderVerifiesReaderAuth(data, ORIGIN, tampered)).toMatchObject({ valid: false })
    // The holder's re-encoding of the untouched request still verifies: the check is the bytes.
    expect(holderVerifiesReaderAuth(data, ORIGIN, checked.itemsRequestBytes)).toMatchObject({ valid: true })
    expect(holderVerifiesReaderAuth(data, 'https://phish.example')).toMatchObject({ valid: false })
  })

  it('without dcApi.readerAuth the DocRequest has no readerAuth', async () => {
    expect(holderVerifiesReaderAuth(await annexC('mdl-plain'), ORIGIN)).toStrictEqual({ present: false })
  })

  it('dcApi.readerAuth without an org-iso-mdoc request to sign is a 422 naming body.dcApi.readerAuth', async () => {
    for (const [dcqlQuery, protocols] of [
      [MDL_QUERY, ['openid4vp-v1-signed']],
      [PID_QUERY, undefined],
    ] as const) {
      const refused = await call('POST', '/api/presentations', {
        id: 'no-annex-c',
        dcqlQuery,
        keyChainId: 'reader',
        dcApi: { ...(protocols ? { protocols } : {}), readerAuth: true },
      })
      expect(refused.statusCode, refused.body).toBe(422)
      expect(refused.json().errors).toContainEqual(
        expect.objectContaining({
          path: 'body.dcApi.readerAuth',
          message: expect.stringContaining('org-iso-mdoc'),
        }),
      )
    }
  })
})
