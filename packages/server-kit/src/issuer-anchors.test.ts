import {
  createCertificate,
  generateKeyPair,
  issuerNameRefusal,
  parseCertificate,
  requestX5c,
} from '@credential-service/crypto'
import type { KeyChainRow } from '@credential-service/db-schema'
import { describe, expect, it } from 'vitest'
import { issuerTrustAnchors as trustAnchors } from './issuer-anchors'

const der = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '')

async function registrarChain() {
  const caPair = await generateKeyPair('ES256')
  const ca = await createCertificate({
    subjectPublicJwk: caPair.publicJwk,
    issuerPrivateJwk: caPair.privateJwk,
    subject: 'CN=Registrar Access CA',
    validityDays: 30,
    ca: true,
  })
  const leafPair = await generateKeyPair('ES256')
  const leaf = await createCertificate({
    subjectPublicJwk: leafPair.publicJwk,
    issuerPrivateJwk: caPair.privateJwk,
    issuerCertificate: ca,
    subject: 'CN=Verifier',
    validityDays: 30,
    dnsNames: ['verifier.example.com'],
  })
  return { ca, leaf }
}

const row = (certificateMode: string, activeCertificates: string[]) =>
  ({ certificateMode, activeCertificates, rootCertificate: null, previousCertificates: null }) as KeyChainRow

describe('issuer trust anchors (HAIP 6.1.1, V-32)', () => {
  it('a registrar-issued chain adds its own leaf only, never the registrar’s CA', async () => {
    const { ca, leaf } = await registrarChain()
    const anchors = trustAnchors([row('registrar', [leaf, ca])])
    expect(anchors.map((a) => a.raw.toString('base64'))).toStrictEqual([der(leaf)])
  })

  it('a chain the user provided adds its own leaf only, never its CA (which certifies others too)', async () => {
    const { ca, leaf } = await registrarChain()
    const provided = trustAnchors([row('provided', [leaf, ca])])
    expect(provided.map((a) => a.raw.toString('base64'))).toStrictEqual([der(leaf)])
    const rotated = {
      ...row('self-signed', []),
      previousCertificates: [leaf, ca],
      previousCertificateMode: 'provided',
    } as KeyChainRow
    expect(trustAnchors([rotated]).map((a) => a.raw.toString('base64'))).toStrictEqual([der(leaf)])
  })

  it('a generated chain keeps its root, or its self-signed leaf, as the anchor', async () => {
    const { ca, leaf } = await registrarChain()
    const internal = { ...row('internal-ca', [leaf]), rootCertificate: ca } as KeyChainRow
    expect(trustAnchors([internal]).map((a) => a.raw.toString('base64'))).toStrictEqual([der(ca), der(leaf)])
    expect(trustAnchors([row('self-signed', [ca])]).map((a) => a.raw.toString('base64'))).toStrictEqual([
      der(ca),
    ])
  })

  it('a rotated-out registrar chain (grace period) adds its leaf only too', async () => {
    const { ca, leaf } = await registrarChain()
    const rotated = {
      ...row('self-signed', []),
      previousCertificates: [leaf, ca],
      previousCertificateMode: 'registrar',
    } as KeyChainRow
    const anchors = trustAnchors([rotated])
    expect(anchors.map((a) => a.raw.toString('base64'))).toStrictEqual([der(leaf)])
  })
})

describe('request object x5c (HAIP 5, V-05)', () => {
  it('keeps a lone leaf and intermediates, drops a trailing self-signed root', async () => {
    const { ca, leaf } = await registrarChain()
    expect(requestX5c([der(leaf)])).toStrictEqual([der(leaf)])
    expect(requestX5c([der(leaf), der(ca)])).toStrictEqual([der(leaf)])
    const { leaf: other } = await registrarChain()
    // `other` is not self-signed: nothing is dropped.
    expect(requestX5c([der(leaf), der(other)])).toStrictEqual([der(leaf), der(other)])
  })
})

describe('iss and the x5c leaf (SD-JWT VC §3.5, S-131)', async () => {
  const keys = await generateKeyPair('ES256')
  const leafOf = async (names: { uris?: string[]; dnsNames?: string[] }) =>
    parseCertificate(
      await createCertificate({
        subjectPublicJwk: keys.publicJwk,
        issuerPrivateJwk: keys.privateJwk,
        subject: 'CN=Issuer',
        validityDays: 1,
        ...names,
      }),
    )
  const refusal = (iss: string) => `iss ${iss} is not a subjectAltName (URI or dNSName) of the x5c leaf`

  it('an iss equal to a URI SAN, or an https iss whose host is a dNSName SAN, names the leaf', async () => {
    const leaf = await leafOf({
      uris: ['https://issuer.example.com/issuers/a'],
      dnsNames: ['issuer.example.com'],
    })
    expect(await issuerNameRefusal('https://issuer.example.com/issuers/a', leaf)).toBeUndefined()
    expect(await issuerNameRefusal('https://issuer.example.com/issuers/b', leaf)).toBeUndefined()
    expect(await issuerNameRefusal('dns:issuer.example.com', leaf)).toBeUndefined()
    expect(await issuerNameRefusal(undefined, leaf)).toBeUndefined()
  })

  it('another host, an http iss matched by host only, and a leaf without SAN are refused', async () => {
    const leaf = await leafOf({ dnsNames: ['issuer.example.com'] })
    expect(await issuerNameRefusal('https://evil.example.org', leaf)).toBe(
      refusal('https://evil.example.org'),
    )
    expect(await issuerNameRefusal('http://issuer.example.com', leaf)).toBe(
      refusal('http://issuer.example.com'),
    )
    const bare = await leafOf({})
    expect(await issuerNameRefusal('https://issuer.example.com', bare)).toBe(
      refusal('https://issuer.example.com'),
    )
  })
})
