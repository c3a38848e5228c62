import { describe, expect, it } from 'vitest'
import { readTrustedList } from './etsi-trusted-list'
import { buildTrustedList, createTestListSigner, issueTestCertificate, signTrustedList } from './testing'

const base64Of = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')

describe('the signature of a TS 119 612 list is checked once, with the signer its KeyInfo names (issue 36)', async () => {
  const signer = await createTestListSigner()
  const other = await createTestListSigner('CN=Other Operator')
  const stranger = await createTestListSigner('CN=Stranger')
  const ca = await issueTestCertificate({ subject: 'CN=QC CA', ca: true })
  const signed = await signTrustedList(
    buildTrustedList({
      issued: new Date(),
      nextUpdate: new Date(Date.now() + 3_600_000),
      services: [{ type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', certificates: [ca.pem] }],
    }),
    signer,
  )
  // KeyInfo (the one copy of the signer's certificate; XAdES holds its digest) is outside what
  // the signature covers: anyone can change it.
  const keyInfoNaming = (pem: string) => signed.replace(base64Of(signer.certificatePem), base64Of(pem))

  it('TS 119 612 §5.7: KeyInfo picks the allowed certificate to check with; the others are not tried', async () => {
    expect(signed).toContain(`<X509Certificate>${base64Of(signer.certificatePem)}</X509Certificate>`)
    const content = await readTrustedList(signed, [other.certificatePem, signer.certificatePem])
    expect(content.certificates).toHaveLength(1)
    // KeyInfo naming another allowed signer: checked with that one only, so it does not verify,
    // although the true signer is allowed too.
    await expect(
      readTrustedList(keyInfoNaming(other.certificatePem), [other.certificatePem, signer.certificatePem]),
    ).rejects.toThrow(
      'the list’s signature does not verify with the certificate its KeyInfo names (or does not cover the whole list)',
    )
  })

  it('TS 119 612 §5.7: refuses a KeyInfo naming no allowed certificate, and a signature without KeyInfo', async () => {
    await expect(
      readTrustedList(keyInfoNaming(stranger.certificatePem), [signer.certificatePem]),
    ).rejects.toThrow(
      'the list’s signature does not verify with any of signerCertificates: its KeyInfo names a certificate that is not one of them',
    )
    const bare = signed.replace(/<KeyInfo>[\s\S]*<\/KeyInfo>/, '')
    expect(bare).not.toContain('KeyInfo')
    await expect(readTrustedList(bare, [signer.certificatePem])).rejects.toThrow(
      'the signature’s KeyInfo names no signer certificate (X509Data/X509Certificate)',
    )
  })

  it('XMLDSig: refuses a SignedInfo with more references than a list needs, before checking any', async () => {
    const reference = /<Reference URI="">[\s\S]*?<\/Reference>/.exec(signed)?.[0] as string
    const padded = signed.replace(reference, reference.repeat(9))
    await expect(readTrustedList(padded, [signer.certificatePem])).rejects.toThrow(
      'the signature has 10 references, more than 8',
    )
  })
})
