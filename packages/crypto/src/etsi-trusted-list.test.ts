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
})
