import { X509Certificate } from 'node:crypto'
import { createList, decodeList } from '@digitalbazaar/vc-bitstring-status-list'
import { ES256Signer } from 'did-jwt'
import { createVerifiableCredentialJwt, createVerifiablePresentationJwt } from 'did-jwt-vc'
import { base64url, decodeJwt } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { createCertificate } from '../src/certificates'
import { generateKeyPair, type KeyPairJwks } from '../src/keys'
import { statusAt } from '../src/status-list-token'
import { decodeBitstring, encodeBitstring, issueVcJwt, verifyVcPresentation } from '../src/vcdm'
import { testSigner } from './test-signer'

const ISSUER = 'https://issuer.example/issuers/t'
const CLIENT_ID = 'x509_san_dns:verifier.example'
const TYPES = ['VerifiableCredential', 'ConformanceCredential']

/** did-jwt's ES256 signer over a JWK's private scalar. */
const signerOf = (pair: KeyPairJwks) => ES256Signer(base64url.decode(pair.privateJwk.d as string))
const didJwk = (pair: KeyPairJwks) => `did:jwk:${base64url.encode(JSON.stringify(pair.publicJwk))}`

/**
 * Interop both ways with independent W3C libraries (issue 38 step 2): did-jwt-vc 4 (VCDM 1.1 JWT
 * encoding) as issuer and as the holder's wallet, @digitalbazaar/vc-bitstring-status-list as the
 * reader and writer of Bitstring Status Lists.
 */
describe('issue 38 step 2: jwt_vc_json with independent W3C libraries', () => {
  let root: { keys: KeyPairJwks; pem: string }
  let leaf: { keys: KeyPairJwks; der: string }
  let holder: KeyPairJwks

  beforeAll(async () => {
    const keys = await generateKeyPair('ES256')
    const pem = await createCertificate({
      subjectPublicJwk: keys.publicJwk,
      issuerPrivateJwk: keys.privateJwk,
      subject: 'CN=interop root',
      validityDays: 2,
      ca: true,
    })
    root = { keys, pem }
    const leafKeys = await generateKeyPair('ES256')
    const leafPem = await createCertificate({
      subjectPublicJwk: leafKeys.publicJwk,
      issuerPrivateJwk: keys.privateJwk,
      issuerCertificate: pem,
      subject: 'CN=interop issuer',
      uris: [ISSUER],
      validityDays: 1,
    })
    leaf = { keys: leafKeys, der: new X509Certificate(leafPem).raw.toString('base64') }
    holder = await generateKeyPair('ES256')
  })

  const verify = (presentation: string) =>
    verifyVcPresentation({
      presentation,
      typeValues: [['ConformanceCredential']],
      nonce: 'n-1',
      audiences: [CLIENT_ID],
      requireHolderBinding: true,
      anchors: [new X509Certificate(root.pem)],
      acceptAnyIssuer: false,
      now: new Date(),
      requireValidStatus: async () => {},
    })

  /** did-jwt-vc as the wallet: its VP JWT, `challenge` as `nonce` and `domain` as `aud` (OpenID4VP B.1.3). */
  const walletVp = (credential: string) =>
    createVerifiablePresentationJwt(
      {
        vp: {
          '@context': ['https://www.w3.org/2018/credentials/v1'],
          type: ['VerifiablePresentation'],
          verifiableCredential: [credential],
        },
      },
      { did: didJwk(holder), signer: signerOf(holder), alg: 'ES256' },
      { challenge: 'n-1', domain: CLIENT_ID },
    )

  it('OpenID4VP 1.0 B.1.3: did-jwt-vc as the wallet presents our VCDM 2.0 credential, and it verifies', async () => {
    const signer = await testSigner(async () => [leaf.der])
    // testSigner makes its own key: sign with a chain whose leaf is that key's.
    const ours = await issueVcJwt({
      signer: { ...signer, x5c: [await leafFor(signer.publicJwk)] },
      issuer: ISSUER,
      type: TYPES,
      subject: { given_name: 'Erika' },
      issuedAt: new Date(Date.now() - 1000),
      expiresAt: new Date(Date.now() + 3_600_000),
      holderJwk: holder.publicJwk,
    })
    const vp = await walletVp(ours)
    expect(decodeJwt(vp)).toMatchObject({ nonce: 'n-1', aud: [CLIENT_ID] })
    const verified = await verify(vp)
    expect(verified.credential).toMatchObject({ credentialSubject: { given_name: 'Erika' } })
  })

  it('VCDM 1.1 §6.3.1: a credential did-jwt-vc issues (vc claim, sub a did:jwk) verifies, holder bound by sub', async () => {
    const credential = await createVerifiableCredentialJwt(
      {
        sub: didJwk(holder),
        nbf: Math.floor(Date.now() / 1000) - 10,
        vc: {
          '@context': ['https://www.w3.org/2018/credentials/v1'],
          type: TYPES,
          credentialSubject: { given_name: 'Max' },
        },
      },
      { did: ISSUER, signer: signerOf(leaf.keys), alg: 'ES256' },
      { header: { x5c: [leaf.der] } },
    )
    const verified = await verify(await walletVp(credential))
    expect(verified.credential).toMatchObject({ type: TYPES, credentialSubject: { given_name: 'Max' } })
    expect(verified.holderJwk).toStrictEqual(holder.publicJwk)
  })

  it('Bitstring Status List §2.2: @digitalbazaar reads the bits of our encodedList, and we read its', async () => {
    const set = [0, 7, 94_567, 131_071]
    const theirs = await decodeList({ encodedList: encodeBitstring(131_072, set) })
    for (const idx of [0, 1, 7, 8, 94_566, 94_567, 131_071])
      expect(theirs.getStatus(idx)).toBe(set.includes(idx))
    const list = await createList({ length: 131_072 })
    for (const idx of set) list.setStatus(idx, true)
    const ours = decodeBitstring(await list.encode())
    for (const idx of [0, 1, 7, 8, 94_566, 94_567, 131_071])
      expect(statusAt(ours, idx)).toBe(set.includes(idx) ? 1 : 0)
  })

  /** A leaf certificate under the interop root for `publicJwk`, naming ISSUER (base64 DER). */
  async function leafFor(publicJwk: KeyPairJwks['publicJwk']) {
    const pem = await createCertificate({
      subjectPublicJwk: publicJwk,
      issuerPrivateJwk: root.keys.privateJwk,
      issuerCertificate: root.pem,
      subject: 'CN=interop issuer (ours)',
      uris: [ISSUER],
      validityDays: 1,
    })
    return new X509Certificate(pem).raw.toString('base64')
  }
})
