import { isSelfSigned } from '@credential-service/crypto'
import { issueTestCertificate } from '@credential-service/crypto/testing'
import { describe, expect, it } from 'vitest'

describe('isSelfSigned', () => {
  it('F-02 / HAIP §6.1.1: a self-signed leaf (keyUsage digitalSignature only, no keyCertSign) is self-signed; a leaf a root issued is not; the root is', async () => {
    const self = await issueTestCertificate({ subject: 'CN=Self' })
    const root = await issueTestCertificate({ subject: 'CN=Root', ca: true })
    const leaf = await issueTestCertificate({ subject: 'CN=Leaf', issuer: root })
    // Same name as its issuer, but signed by the root: self-issued, not self-signed.
    const namesake = await issueTestCertificate({ subject: 'CN=Root', issuer: root })
    expect(isSelfSigned(self.pem)).toBe(true)
    expect(isSelfSigned(self.der)).toBe(true)
    expect(isSelfSigned(root.pem)).toBe(true)
    expect(isSelfSigned(leaf.pem)).toBe(false)
    expect(isSelfSigned(namesake.pem)).toBe(false)
  })
})
