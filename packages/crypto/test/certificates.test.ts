import 'reflect-metadata'
import { X509Certificate } from 'node:crypto'
import * as x509 from '@peculiar/x509'
import { describe, expect, it } from 'vitest'
import { certificateFacts } from '../src/certificate-facts'
import { createCertificate, MDL_DOCUMENT_SIGNER_EKU } from '../src/certificates'
import { generateKeyPair } from '../src/keys'

describe('ISO 18013-5 Annex B.1 certificate profile', () => {
  it('B.1.4: a Document Signer leaf under an IACA root carries mdlDS EKU (critical), key usage digitalSignature only (critical), AKI = root SKI, SKI, IAN, CRL DP, validity bounds', async () => {
    const rootPair = await generateKeyPair('ES256')
    const leafPair = await generateKeyPair('ES256')
    const now = new Date('2026-01-01T00:00:00Z')
    const rootPem = await createCertificate({
      subjectPublicJwk: rootPair.publicJwk,
      issuerPrivateJwk: rootPair.privateJwk,
      subject: 'CN=Test IACA,C=DE',
      validityDays: 3650,
      ca: true,
      issuerAltNameUri: 'https://issuer.example/issuers/t',
      crlDistributionPoints: ['https://issuer.example/crl/iaca.crl'],
      now,
    })
    const leafPem = await createCertificate({
      subjectPublicJwk: leafPair.publicJwk,
      issuerPrivateJwk: rootPair.privateJwk,
      issuerCertificate: rootPem,
      subject: 'CN=Test DS,C=DE',
      validityDays: 365,
      documentSigner: true,
      issuerAltNameUri: 'https://issuer.example/issuers/t',
      crlDistributionPoints: ['https://issuer.example/crl/iaca.crl'],
      now,
    })
    const root = new x509.X509Certificate(rootPem)
    const leaf = new x509.X509Certificate(leafPem)
    expect(leaf.subject).toBe('CN=Test DS, C=DE')
    expect(leaf.issuer).toBe('CN=Test IACA, C=DE')

    const eku = leaf.getExtension(x509.ExtendedKeyUsageExtension)
    expect(eku?.critical).toBe(true)
    expect([...(eku?.usages ?? [])].map(String)).toStrictEqual([MDL_DOCUMENT_SIGNER_EKU])
    expect(MDL_DOCUMENT_SIGNER_EKU).toBe('1.0.18013.5.1.2')

    const keyUsage = leaf.getExtension(x509.KeyUsagesExtension)
    expect(keyUsage?.critical).toBe(true)
    expect(keyUsage?.usages).toBe(x509.KeyUsageFlags.digitalSignature)

    const rootSki = root.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId
    expect(leaf.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(rootSki)
    expect(leaf.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toMatch(/^[0-9a-f]{40}$/)

    const ian = leaf.getExtension(x509.IssuerAlternativeNameExtension)
    expect(ian?.names.toJSON()).toStrictEqual([{ type: 'url', value: 'https://issuer.example/issuers/t' }])
    const crl = leaf.getExtension(x509.CRLDistributionPointsExtension)
    expect(crl?.distributionPoints).toHaveLength(1)

    expect(leaf.notBefore.getTime()).toBe(now.getTime() - 60_000)
    expect(leaf.notAfter.getTime()).toBe(leaf.notBefore.getTime() + 365 * 86_400_000)
    expect(await leaf.verify({ publicKey: root.publicKey, signatureOnly: true })).toBe(true)
  })

  it('a self-signed certificate names its own key as the authority key; no EKU unless a document signer', async () => {
    const pair = await generateKeyPair('EdDSA')
    const pem = await createCertificate({
      subjectPublicJwk: pair.publicJwk,
      issuerPrivateJwk: pair.privateJwk,
      subject: 'CN=Self,C=AT',
      validityDays: 30,
    })
    const certificate = new x509.X509Certificate(pem)
    expect(certificate.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(
      certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId,
    )
    expect(certificate.getExtension(x509.ExtendedKeyUsageExtension)).toBeNull()
  })

  it('RFC 5280 §4.2.1.3, §4.2.1.9: certificateFacts reads cA, pathLenConstraint and keyUsage', async () => {
    const pair = await generateKeyPair('ES256')
    const make = (options: { ca?: boolean; pathLength?: number }) =>
      createCertificate({
        subjectPublicJwk: pair.publicJwk,
        issuerPrivateJwk: pair.privateJwk,
        subject: 'CN=C',
        validityDays: 1,
        ...options,
      })
    const read = async (pem: string) => {
      const { ca, pathLength, keyUsage } = await certificateFacts(new X509Certificate(pem))
      return { ca, pathLength, keyUsage }
    }
    expect(await read(await make({ ca: true, pathLength: 2 }))).toStrictEqual({
      ca: true,
      pathLength: 2,
      keyUsage: { keyCertSign: true, digitalSignature: false },
    })
    expect((await read(await make({ ca: true }))).pathLength).toBe(0)
    expect(await read(await make({}))).toStrictEqual({
      ca: false,
      pathLength: undefined,
      keyUsage: { keyCertSign: false, digitalSignature: true },
    })
  })
})

describe('subjectAltName host entries (issue 42 item 6)', () => {
  it('RFC 5280 §4.2.1.6: a host that is an IP address goes into iPAddress (and, for development x509_san_dns client ids, dNSName); names stay dNSName', async () => {
    const pair = await generateKeyPair('ES256')
    const pem = await createCertificate({
      subjectPublicJwk: pair.publicJwk,
      issuerPrivateJwk: pair.privateJwk,
      subject: 'CN=Development issuer',
      validityDays: 1,
      // What `new URL(PUBLIC_URL).hostname` gives for these development URLs.
      dnsNames: ['127.0.0.1', '[::1]', 'localhost'],
      uris: ['http://127.0.0.1:3000/issuers/t'],
    })
    // Node prints the SAN with its own reader: DNS:<name>, IP Address:<address>, URI:<uri>.
    expect(new X509Certificate(pem).subjectAltName?.split(', ')).toStrictEqual([
      'IP Address:127.0.0.1',
      'DNS:127.0.0.1',
      'IP Address:0:0:0:0:0:0:0:1',
      'DNS:[::1]',
      'DNS:localhost',
      'URI:http://127.0.0.1:3000/issuers/t',
    ])
  })
})
