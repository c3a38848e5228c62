import { X509Certificate } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { readListOfTrustedLists } from './etsi-lotl'
import { buildTrustedList, createTestListSigner, signTrustedList } from './testing'

const subjects = (pems: string[]) => pems.map((pem) => new X509Certificate(pem).subject)

describe('issue 25: ETSI TS 119 612 §5.3.13 lists of trusted lists (PointersToOtherTSL)', async () => {
  const lotlSigner = await createTestListSigner('CN=LOTL Operator')
  const de = await createTestListSigner('CN=DE Scheme Operator', 'P-256')
  const at = await createTestListSigner('CN=AT Scheme Operator')
  const issued = new Date('2026-01-01T00:00:00Z')
  const nextUpdate = new Date('2026-07-01T00:00:00Z')
  const lotlXml = buildTrustedList({
    issued,
    nextUpdate,
    pointers: [
      { location: 'https://tl.example.de/tl.xml', territory: 'DE', certificates: [de.certificatePem] },
      {
        location: 'https://tl.example.de/tl.pdf',
        territory: 'DE',
        certificates: [de.certificatePem],
        mimeType: 'application/pdf',
      },
      { location: 'https://tl.example.at/tl.xml', territory: 'AT', certificates: [at.certificatePem] },
      {
        location: 'https://lotl.example.eu/lotl.xml',
        territory: 'EU',
        certificates: [lotlSigner.certificatePem],
        tslType: 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUlistofthelists',
      },
    ],
  })
  const lotl = await signTrustedList(lotlXml, lotlSigner)

  it('ETSI TS 119 612 §5.3.13: reads the XML pointers with their location, territory and certificates, skipping PDF pointers and the pointer to the list of lists itself', async () => {
    const read = await readListOfTrustedLists(lotl, [lotlSigner.certificatePem])
    expect(read.listIssuedAt).toEqual(issued)
    expect(read.nextUpdate).toEqual(nextUpdate)
    expect(read.pointers.map(({ territory, location }) => ({ territory, location }))).toEqual([
      { territory: 'DE', location: 'https://tl.example.de/tl.xml' },
      { territory: 'AT', location: 'https://tl.example.at/tl.xml' },
    ])
    expect(read.pointers.map((pointer) => subjects(pointer.certificates))).toEqual([
      ['CN=DE Scheme Operator'],
      ['CN=AT Scheme Operator'],
    ])
  })

  it('ETSI TS 119 612 §5.3.13: territories keeps only the pointers of those SchemeTerritory codes', async () => {
    const read = await readListOfTrustedLists(lotl, [lotlSigner.certificatePem], ['AT'])
    expect(read.pointers.map((pointer) => pointer.territory)).toEqual(['AT'])
  })

  it('ETSI TS 119 612 §5.3.13: refuses a list of lists whose signature was tampered with, or made by a key not among signerCertificates', async () => {
    const tampered = lotl.replace('https://tl.example.at/tl.xml', 'https://evil.example/tl.xml')
    expect(tampered).not.toBe(lotl)
    await expect(readListOfTrustedLists(tampered, [lotlSigner.certificatePem])).rejects.toThrow(
      /does not verify/,
    )
    await expect(readListOfTrustedLists(lotl, [de.certificatePem])).rejects.toThrow(/does not verify/)
  })

  it('ETSI TS 119 612 §5.7 / EN 319 132-1: refuses a list of lists without XAdES signed properties', async () => {
    const bare = await signTrustedList(lotlXml, lotlSigner, { xades: false })
    await expect(readListOfTrustedLists(bare, [lotlSigner.certificatePem])).rejects.toThrow(
      /no XAdES signed properties/,
    )
  })

  it('ETSI TS 119 612 §5.3.13: refuses a followed pointer that names no certificate', async () => {
    const xml = buildTrustedList({
      issued,
      nextUpdate,
      pointers: [{ location: 'https://tl.example.fr/tl.xml', territory: 'FR', certificates: [] }],
    })
    await expect(
      readListOfTrustedLists(await signTrustedList(xml, lotlSigner), [lotlSigner.certificatePem]),
    ).rejects.toThrow('the pointer of territory FR (https://tl.example.fr/tl.xml) names no certificate')
  })
})
