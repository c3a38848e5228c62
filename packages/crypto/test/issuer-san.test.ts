import { X509Certificate } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createCertificate } from '../src/certificates'
import { certificateNamesIssuer } from '../src/issuer-san'
import { generateKeyPair } from '../src/keys'
import { x5cEntry } from '../src/parsed-certificates'

const ISSUER = 'https://issuer.example/issuers/acme'

async function leaf(names: { dnsNames?: string[]; uris?: string[] }): Promise<string> {
  const pair = await generateKeyPair('ES256')
  return createCertificate({
    subjectPublicJwk: pair.publicJwk,
    issuerPrivateJwk: pair.privateJwk,
    subject: 'CN=Leaf',
    validityDays: 30,
    ...names,
  })
}

describe('SD-JWT VC §3.5 (checklist S-131): the x5c leaf names the issuer', () => {
  it('createCertificate puts `uris` and `dnsNames` in one SubjectAlternativeName extension', async () => {
    const pem = await leaf({ dnsNames: ['issuer.example'], uris: [ISSUER] })
    expect(new X509Certificate(pem).subjectAltName).toBe(`DNS:issuer.example, URI:${ISSUER}`)
    expect(new X509Certificate(await leaf({ uris: [ISSUER] })).subjectAltName).toBe(`URI:${ISSUER}`)
  })

  it('a URI SAN equal to iss matches, in PEM and in x5c form', async () => {
    const pem = await leaf({ uris: [ISSUER] })
    expect(await certificateNamesIssuer(pem, ISSUER)).toBe(true)
    expect(await certificateNamesIssuer(x5cEntry(pem), ISSUER)).toBe(true)
    expect(await certificateNamesIssuer(pem, `${ISSUER}/other`)).toBe(false)
  })

  it('a dNSName SAN equal to the host of an https iss matches; of an http iss it does not', async () => {
    const pem = await leaf({ dnsNames: ['issuer.example'] })
    expect(await certificateNamesIssuer(pem, ISSUER)).toBe(true)
    expect(await certificateNamesIssuer(pem, 'http://issuer.example/issuers/acme')).toBe(false)
    expect(await certificateNamesIssuer(pem, 'https://other.example/issuers/acme')).toBe(false)
  })

  it('a leaf without SAN, or with a URI that only contains iss, does not match', async () => {
    expect(await certificateNamesIssuer(await leaf({}), ISSUER)).toBe(false)
    const quoted = await leaf({ uris: [`${ISSUER},x`] })
    expect(await certificateNamesIssuer(quoted, ISSUER)).toBe(false)
    expect(await certificateNamesIssuer(quoted, `${ISSUER},x`)).toBe(true)
  })
})
