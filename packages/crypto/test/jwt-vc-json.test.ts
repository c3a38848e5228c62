import { X509Certificate } from 'node:crypto'
import { gunzipSync, gzipSync } from 'node:zlib'
import { base64url, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  decodeBitstring,
  encodeBitstring,
  issueVcJwt,
  verifyVcPresentation,
} from '../src/formats/jwt-vc-json'
import type { KeyPairJwks } from '../src/keys'
import type { PresentationTrust } from '../src/presentation'
import type { Signer } from '../src/signer'
import { signJws } from '../src/signer'
import { statusAt } from '../src/status-list-token'
import { testLeaf, testRoot, testSigner, testVcOptions } from './test-signer'

const ISSUER = 'https://issuer.example/issuers/t'
const CLIENT_ID = 'x509_san_dns:verifier.example'
const TYPES = ['VerifiableCredential', 'ConformanceCredential']

describe('issue 38 step 2: W3C VCs as JWTs (jwt_vc_json)', () => {
  let root: { keys: KeyPairJwks; pem: string }
  let signer: Signer
  let holder: Awaited<ReturnType<typeof generateKeyPair>>
  let holderJwk: JWK
  const statuses: unknown[] = []
  const trust = (): PresentationTrust => ({
    anchors: [new X509Certificate(root.pem)],
    acceptAnyIssuer: false,
    now: new Date(),
    requireValidStatus: async (entry) => {
      statuses.push(entry)
    },
  })

  beforeAll(async () => {
    root = await testRoot()
    signer = await testSigner(async (pair) => [await testLeaf(root, pair.publicJwk, [ISSUER])])
    holder = await generateKeyPair('ES256')
    holderJwk = await exportJWK(holder.publicKey)
  })

  const issue = (overrides: Partial<Parameters<typeof issueVcJwt>[0]> = {}) =>
    issueVcJwt({ ...testVcOptions(signer, ISSUER, holderJwk), ...overrides })

  /** A VCDM 1.1 VP JWT (OpenID4VP 1.0 B.1.3's example): the VC-JWT in `vp.verifiableCredential`. */
  const vp11 = (credential: string, claims: Record<string, unknown> = {}, key = holder.privateKey) =>
    new SignJWT({
      vp: {
        '@context': ['https://www.w3.org/2018/credentials/v1'],
        type: ['VerifiablePresentation'],
        verifiableCredential: [credential],
      },
      nonce: 'n-1',
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256' })
      .setAudience(String(claims.aud ?? CLIENT_ID))
      .setIssuedAt()
      .sign(key)

  const verify = (presentation: string, requireHolderBinding = true, audiences = [CLIENT_ID]) =>
    verifyVcPresentation({
      presentation,
      typeValues: [['ConformanceCredential']],
      nonce: 'n-1',
      audiences,
      requireHolderBinding,
      ...trust(),
    })

  it('VC-JOSE-COSE §3.1.1: the payload is the VCDM 2.0 credential, typ vc+jwt, no vc claim, cnf.jwk the holder key', async () => {
    const credential = await issue()
    const [header, payload] = credential
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
    expect(header).toMatchObject({ typ: 'vc+jwt', alg: 'ES256', x5c: signer.x5c })
    expect(payload).toMatchObject({
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      type: TYPES,
      issuer: ISSUER,
      iss: ISSUER,
      credentialSubject: { given_name: 'Erika' },
      cnf: { jwk: holderJwk },
    })
    expect(payload.vc).toBeUndefined()
  })

  it('OpenID4VP 1.0 B.1.3: a VCDM 1.1 VP JWT with the request nonce and the client id as aud verifies', async () => {
    const verified = await verify(await vp11(await issue()))
    expect(verified.credential).toMatchObject({ type: TYPES, credentialSubject: { given_name: 'Erika' } })
  })

  it('VCDM 1.1 §6.3.1: a credential in the JWT encoding (vc claim, iss, nbf, exp) is accepted too', async () => {
    const now = Math.floor(Date.now() / 1000)
    const v1 = await signJws(
      signer,
      { typ: 'JWT', x5c: signer.x5c },
      {
        iss: ISSUER,
        nbf: now - 10,
        exp: now + 600,
        cnf: { jwk: holderJwk },
        vc: {
          '@context': ['https://www.w3.org/2018/credentials/v1'],
          type: TYPES,
          credentialSubject: { given_name: 'Max' },
        },
      },
    )
    const verified = await verify(await vp11(v1))
    expect(verified.credential).toMatchObject({ credentialSubject: { given_name: 'Max' } })
  })

  /** A VCDM 2.0 vc+jwt of the holder signed by the issuer as it is, with `members` added. */
  const signVc2 = (members: Record<string, unknown>) =>
    signJws(
      signer,
      { typ: 'vc+jwt', x5c: signer.x5c },
      {
        '@context': ['https://www.w3.org/ns/credentials/v2'],
        type: TYPES,
        credentialSubject: {},
        cnf: { jwk: holderJwk },
        ...members,
      },
    )

  it('VC-JOSE-COSE §3.1.1: "The JWT Claim Names vc and vp MUST NOT be present" in a vc+jwt', async () => {
    const mixed = await signJws(
      signer,
      { typ: 'vc+jwt', x5c: signer.x5c },
      { iss: ISSUER, vc: { '@context': ['https://www.w3.org/2018/credentials/v1'], type: TYPES } },
    )
    await expect(verify(await vp11(mixed))).rejects.toThrow('a vc+jwt credential has no vc claim')
  })

  it('VC-JOSE-COSE §3.3.1: iss, if present, "MUST match issuer"', async () => {
    const forged = await signVc2({ issuer: 'https://other.example', iss: ISSUER })
    await expect(verify(await vp11(forged))).rejects.toThrow('the credential iss does not match its issuer')
  })

  it('VCDM 2.0 §4.7: "A verifiable credential MUST have an issuer property"', async () => {
    const anonymous = await signVc2({})
    await expect(verify(await vp11(anonymous))).rejects.toThrow('the credential names no issuer')
  })

  it('VCDM 2.0 §4.9: a credential past validUntil is refused', async () => {
    const expired = await issue({
      issuedAt: new Date(Date.now() - 7_200_000),
      expiresAt: new Date(Date.now() - 3_600_000),
    })
    await expect(verify(await vp11(expired))).rejects.toThrow('the credential has expired')
  })

  it('OpenID4VP 1.0 §14.1: a VP JWT signed by another key than the bound one is refused', async () => {
    const other = await generateKeyPair('ES256')
    await expect(verify(await vp11(await issue(), {}, other.privateKey))).rejects.toThrow(
      'the VP JWT is not signed by the holder key of its credential',
    )
  })

  const didJwkOf = (jwk: JWK) => `did:jwk:${base64url.encode(JSON.stringify(jwk))}`

  it('OpenID4VP 1.0 B.1, VCDM 1.1 §6.3.1 "iss MUST represent the holder": a VP naming the bound key as its holder verifies', async () => {
    const credential = await issue()
    await expect(verify(await vp11(credential, { iss: didJwkOf(holderJwk) }))).resolves.toMatchObject({
      types: TYPES,
    })
    const other = await exportJWK((await generateKeyPair('ES256')).publicKey)
    // Signed by the bound key, but claiming another holder: refused though the signature holds.
    await expect(verify(await vp11(credential, { iss: didJwkOf(other) }))).rejects.toThrow(
      `the VP names "${didJwkOf(other)}" as its holder, not the credential's`,
    )
    await expect(verify(await vp11(credential, { iss: 'did:example:someone-else' }))).rejects.toThrow(
      'the VP names "did:example:someone-else" as its holder',
    )
  })

  it('OpenID4VP 1.0 B.1, VCDM 2.0 §4.13: the VP holder (a value or an object with id) must be the subject id of the credential', async () => {
    const subject = 'did:example:holder-1'
    const credential = await signVc2({ issuer: ISSUER, credentialSubject: { id: subject } })
    await expect(verify(await vp11(credential, { holder: subject }))).resolves.toMatchObject({ types: TYPES })
    await expect(verify(await vp11(credential, { holder: { id: 'did:example:holder-2' } }))).rejects.toThrow(
      'the VP names "did:example:holder-2" as its holder',
    )
    await expect(
      verify(await vp11(credential, { vp: { verifiableCredential: [credential], holder: 'did:example:x' } })),
    ).rejects.toThrow('the VP names "did:example:x" as its holder')
  })

  it('V-35, OpenID4VP 1.0 B.1.3: over the DC API the VP aud is origin:<origin>, not the client id', async () => {
    const credential = await issue()
    const origin = ['origin:https://rp.example']
    await expect(verify(await vp11(credential, { aud: origin[0] }), true, origin)).resolves.toMatchObject({
      types: TYPES,
    })
    await expect(verify(await vp11(credential), true, origin)).rejects.toThrow(
      "the VP JWT aud is not 'origin:https://rp.example'",
    )
  })

  it('OpenID4VP 1.0 B.1: a bare credential only where holder binding is not required', async () => {
    const credential = await issue({ holderJwk: undefined })
    await expect(verify(credential)).rejects.toThrow('a VP JWT was asked for, not a bare credential')
    await expect(verify(credential, false)).resolves.toMatchObject({ types: TYPES })
  })

  it('Bitstring Status List §2.2: index 0 is the left-most bit of the GZIP-compressed bitstring, at least 16KB', () => {
    const encoded = encodeBitstring(8, [0, 9])
    expect(encoded.startsWith('u')).toBe(true)
    const bytes = gunzipSync(Buffer.from(encoded.slice(1), 'base64url'))
    expect(bytes.length).toBe(16_384)
    expect([bytes[0], bytes[1]]).toStrictEqual([0x80, 0x40])
    const list = decodeBitstring(encoded)
    expect([0, 1, 8, 9].map((idx) => statusAt(list, idx))).toStrictEqual([1, 0, 0, 1])
  })

  it('Bitstring Status List §3.2: a list shorter than 131,072 entries is STATUS_LIST_LENGTH_ERROR', () => {
    const short = `u${base64url.encode(gzipSync(new Uint8Array(100)))}`
    expect(() => decodeBitstring(short)).toThrow('has fewer than 131072 entries')
  })

  it('Bitstring Status List §3.2: each BitstringStatusListEntry goes to the status port, with its purpose', async () => {
    statuses.length = 0
    const entries = ['revocation', 'suspension'].map((purpose) => ({
      type: 'BitstringStatusListEntry',
      statusPurpose: purpose,
      statusListIndex: '94567',
      statusListCredential: `${ISSUER}/status-lists/l/bitstring/${purpose}`,
    }))
    await verify(await vp11(await issue({ credentialStatus: entries })))
    expect(statuses).toStrictEqual([
      { idx: 94567, uri: `${ISSUER}/status-lists/l/bitstring/revocation`, purpose: 'revocation' },
      { idx: 94567, uri: `${ISSUER}/status-lists/l/bitstring/suspension`, purpose: 'suspension' },
    ])
  })
})

describe('Bitstring Status List: a hostile encodedList (checklist S-124)', () => {
  it('a GZIP bomb past MAX_STATUS_LIST_BYTES is refused quickly, not inflated', async () => {
    const { decodeBitstring } = await import('../src/formats/jwt-vc-json/bitstring-status-list')
    const { MAX_STATUS_LIST_BYTES, StatusListError } = await import('../src/status-list-token')
    // 64 MiB of zeros compress to ~64 KB: four times the cap.
    const bomb = `u${gzipSync(Buffer.alloc(4 * MAX_STATUS_LIST_BYTES)).toString('base64url')}`
    const started = process.cpuUsage()
    expect(() => decodeBitstring(bomb)).toThrow(StatusListError)
    const cpu = process.cpuUsage(started)
    // Inflating stops at the cap: far less CPU than the whole 64 MiB would take.
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(500)
  })
})
