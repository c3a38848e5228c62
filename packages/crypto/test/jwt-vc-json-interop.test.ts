import { X509Certificate } from 'node:crypto'
import { createList, decodeList } from '@digitalbazaar/vc-bitstring-status-list'
import { ES256Signer } from 'did-jwt'
import { createVerifiableCredentialJwt, createVerifiablePresentationJwt } from 'did-jwt-vc'
import { base64url, decodeJwt } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  decodeBitstring,
  encodeBitstring,
  issueVcJwt,
  verifyVcPresentation,
} from '../src/formats/jwt-vc-json'
import { generateKeyPair, type KeyPairJwks } from '../src/keys'
import { statusAt } from '../src/status-list-token'
import { testLeaf, testRoot, testSigner, testVcOptions } from './test-signer'

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
    root = await testRoot('CN=interop root')
    const leafKeys = await generateKeyPair('ES256')
    leaf = { keys: leafKeys, der: await testLeaf(root, leafKeys.publicJwk, [ISSUER]) }
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
    const signer = await testSigner(async (pair) => [await testLeaf(root, pair.publicJwk, [ISSUER])])
    const ours = await issueVcJwt(testVcOptions(signer, ISSUER, holder.publicJwk))
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
})
