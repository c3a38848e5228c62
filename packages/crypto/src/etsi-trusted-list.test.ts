import { X509Certificate } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { readTrustedList } from './etsi-trusted-list'
import { buildTrustedList, createTestListSigner, issueTestCertificate, signTrustedList } from './testing'

const QC_CA = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC'
const PID = 'http://uri.etsi.org/Svc/Svctype/Provider/PID'
const WITHDRAWN = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn'

describe('ETSI TS 119 612 trusted lists', async () => {
  const signer = await createTestListSigner()
  const other = await createTestListSigner('CN=Someone Else')
  const ca = await issueTestCertificate({ subject: 'CN=QC CA', ca: true })
  const pid = await issueTestCertificate({ subject: 'CN=PID Provider', ca: true })
  const gone = await issueTestCertificate({ subject: 'CN=Withdrawn CA', ca: true })
  const issued = new Date('2026-01-01T00:00:00Z')
  const nextUpdate = new Date('2026-07-01T00:00:00Z')
  const xml = buildTrustedList({
    issued,
    nextUpdate,
    services: [
      { type: QC_CA, certificates: [ca.pem] },
      { type: PID, certificates: [pid.pem] },
      { type: QC_CA, status: WITHDRAWN, certificates: [gone.pem] },
    ],
  })
  const signed = await signTrustedList(xml, signer)
  const subjects = (pems: string[]) => pems.map((pem) => new X509Certificate(pem).subject)

  it('reads the dates and the granted services’ certificates of a list signed by an allowed signer', async () => {
    const content = await readTrustedList(signed, [other.certificatePem, signer.certificatePem])
    expect(content.listIssuedAt).toEqual(issued)
    expect(content.nextUpdate).toEqual(nextUpdate)
    expect(subjects(content.certificates).sort()).toEqual(['CN=PID Provider', 'CN=QC CA'])
  })

  it('keeps only the services of the wanted types', async () => {
    const content = await readTrustedList(signed, [signer.certificatePem], [PID])
    expect(subjects(content.certificates)).toEqual(['CN=PID Provider'])
  })

  it('refuses a list signed by a certificate not among signerCertificates', async () => {
    await expect(readTrustedList(signed, [other.certificatePem])).rejects.toThrow(/does not verify/)
  })

  it('refuses a list changed after signing', async () => {
    const tampered = signed.replace(nextUpdate.toISOString(), '2030-01-01T00:00:00.000Z')
    expect(tampered).not.toBe(signed)
    await expect(readTrustedList(tampered, [signer.certificatePem])).rejects.toThrow(/does not verify/)
  })

  it('refuses an unsigned list and one that is not a trusted list', async () => {
    await expect(readTrustedList(xml, [signer.certificatePem])).rejects.toThrow(/not signed/)
    await expect(readTrustedList('<a/>', [signer.certificatePem])).rejects.toThrow(/TrustServiceStatusList/)
  })

  describe('ECDSA signatures (TS 119 612 §5.7, XMLDSig 1.1 §6.4.3)', async () => {
    const p256 = await createTestListSigner('CN=P-256 Scheme Operator', 'P-256')
    const p384 = await createTestListSigner('CN=P-384 Scheme Operator', 'P-384')
    const otherEc = await createTestListSigner('CN=Other P-256 Operator', 'P-256')
    const signedP256 = await signTrustedList(xml, p256)
    const signedP384 = await signTrustedList(xml, p384)

    it('TS 119 612 §5.7 / XMLDSig 1.1 §6.4.3: reads a list signed with ECDSA P-256 (ecdsa-sha256)', async () => {
      expect(signedP256).toContain('http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256')
      const content = await readTrustedList(signedP256, [signer.certificatePem, p256.certificatePem])
      expect(content.nextUpdate).toEqual(nextUpdate)
      expect(subjects(content.certificates).sort()).toEqual(['CN=PID Provider', 'CN=QC CA'])
    })

    it('TS 119 612 §5.7 / XMLDSig 1.1 §6.4.3: reads a list signed with ECDSA P-384 (ecdsa-sha384)', async () => {
      expect(signedP384).toContain('http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384')
      const content = await readTrustedList(signedP384, [p384.certificatePem], [PID])
      expect(content.listIssuedAt).toEqual(issued)
      expect(subjects(content.certificates)).toEqual(['CN=PID Provider'])
    })

    it('TS 119 612 §5.7 / XMLDSig 1.1 §6.4.3: refuses an ECDSA-signed list changed after signing', async () => {
      for (const list of [signedP256, signedP384]) {
        const tampered = list.replace(nextUpdate.toISOString(), '2030-01-01T00:00:00.000Z')
        expect(tampered).not.toBe(list)
        await expect(readTrustedList(tampered, [p256.certificatePem, p384.certificatePem])).rejects.toThrow(
          /does not verify/,
        )
      }
    })

    it('TS 119 612 §5.7 / XMLDSig 1.1 §6.4.3: refuses an ECDSA signature made by another key', async () => {
      await expect(
        readTrustedList(signedP256, [otherEc.certificatePem, p384.certificatePem]),
      ).rejects.toThrow(/does not verify/)
      // An RSA signer certificate never verifies an ECDSA signature method.
      await expect(readTrustedList(signedP256, [signer.certificatePem])).rejects.toThrow(/does not verify/)
    })

    it('TS 119 612 §5.7 / XMLDSig 1.1 §6.4.3: still reads RSA-signed lists (rsa-sha256)', async () => {
      expect(signed).toContain('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')
      const content = await readTrustedList(signed, [p256.certificatePem, signer.certificatePem])
      expect(subjects(content.certificates).sort()).toEqual(['CN=PID Provider', 'CN=QC CA'])
      await expect(readTrustedList(signed, [p256.certificatePem])).rejects.toThrow(/does not verify/)
    })
  })
  describe('issue 25: XAdES signed properties (ETSI EN 319 132-1, TS 119 612 §5.7)', () => {
    it('TS 119 612 §5.7 / EN 319 132-1: reads a list whose SignedProperties, referenced by Id with the SignedProperties Type, name the signer certificate (SHA-256, SHA-1, SHA-384, SHA-512 CertDigest)', async () => {
      expect(signed).toContain('Type="http://uri.etsi.org/01903#SignedProperties"')
      expect(signed).toContain('URI="#xades-signed-properties"')
      for (const digest of ['sha1', 'sha384', 'sha512'] as const) {
        const list = await signTrustedList(xml, signer, { xades: { digest } })
        const content = await readTrustedList(list, [signer.certificatePem])
        expect(subjects(content.certificates).sort()).toEqual(['CN=PID Provider', 'CN=QC CA'])
      }
    })

    it('TS 119 612 §5.7 / EN 319 132-1: refuses a list whose signature has no SignedProperties reference', async () => {
      const bare = await signTrustedList(xml, signer, { xades: false })
      await expect(readTrustedList(bare, [signer.certificatePem])).rejects.toThrow(
        /has no XAdES signed properties \(no SignedInfo Reference of Type http:\/\/uri.etsi.org\/01903#SignedProperties\)/,
      )
    })

    it('TS 119 612 §5.7 / EN 319 132-1: refuses a list whose SigningCertificateV2 CertDigest is of another certificate', async () => {
      const list = await signTrustedList(xml, signer, { xades: { certificatePem: other.certificatePem } })
      await expect(readTrustedList(list, [signer.certificatePem, other.certificatePem])).rejects.toThrow(
        /no SigningCertificateV2 CertDigest matches the certificate that verified the signature/,
      )
    })

    it('TS 119 612 §5.7 / EN 319 132-1: refuses a SigningTime in the future, allows a few minutes of clock skew', async () => {
      const ahead = await signTrustedList(xml, signer, {
        xades: { signingTime: new Date(Date.now() + 3_600_000) },
      })
      await expect(readTrustedList(ahead, [signer.certificatePem])).rejects.toThrow(
        /SigningTime .* is in the future/,
      )
      const skewed = await signTrustedList(xml, signer, {
        xades: { signingTime: new Date(Date.now() + 60_000) },
      })
      await expect(readTrustedList(skewed, [signer.certificatePem])).resolves.toMatchObject({ nextUpdate })
    })

    it('TS 119 612 §5.7 / EN 319 132-1: the SignedProperties digest is checked (a SigningTime changed after signing does not verify)', async () => {
      const time = /<xades:SigningTime>([^<]+)</.exec(signed)?.[1] as string
      const tampered = signed.replace(time, '2020-01-01T00:00:00.000Z')
      expect(tampered).not.toBe(signed)
      await expect(readTrustedList(tampered, [signer.certificatePem])).rejects.toThrow(/does not verify/)
    })
  })
})
