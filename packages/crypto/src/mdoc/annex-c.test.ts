import { createHash, createPrivateKey, randomBytes, sign, X509Certificate } from 'node:crypto'
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core'
import { DeviceRequest } from '@owf/mdoc'
import { Encoder, Tag } from 'cbor-x'
import { base64url, type JWK } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { testSigner } from '../../test/test-signer'
import { createCertificate } from '../certificates'
import { generateKeyPair, type KeyPairJwks } from '../keys'
import { PresentationRejected } from '../presentation'
import type { Signer } from '../signer'
import { annexCRequest, annexCSessionTranscript, openAnnexCResponse } from './annex-c'
import { issueMdoc } from './issue'
import { verifyMdocPresentation } from './verify'

// The holder's own CBOR, as ISO 18013-5 uses it: plain byte strings, maps kept as maps.
const cbor = new Encoder({
  useRecords: false,
  tagUint8Array: false,
  mapsAsObjects: false,
  variableMapSize: true,
})
const suite = () =>
  new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() })

const DOCTYPE = 'org.iso.18013.5.1.mDL'
const NS = 'org.iso.18013.5.1'
const ORIGIN = 'https://rp.example'
const QUERY = {
  id: 'mdl',
  format: 'mso_mdoc' as const,
  meta: { doctype_value: DOCTYPE },
  claims: [{ path: [NS, 'family_name'], intent_to_retain: true }, { path: [NS, 'age_over_18'] }],
}

/** Bytes under tag 24, whichever decoder extension (cbor-x Tag or @owf/mdoc DataItem) read them. */
const embedded = (item: unknown): Uint8Array =>
  item instanceof Tag ? (item.value as Uint8Array) : (item as { buffer: Uint8Array }).buffer

interface HolderOptions {
  request: { deviceRequest: string; encryptionInfo: string }
  /** The origin the browser gives the wallet. */
  origin: string
  /** Sign over this SessionTranscript instead of the one computed from the request. */
  signOver?: unknown
  /** Encrypt to this public JWK instead of the request's recipient key. */
  recipient?: JWK
}

/**
 * An independent Annex C wallet: reads the request with @owf/mdoc and cbor-x, computes the
 * SessionTranscript itself (ISO/IEC 18013-7 C.3), discloses only the requested elements, signs
 * DeviceAuthentication with the device key, and seals with @hpke/core.
 */
async function holderRespond(issued: Uint8Array, device: KeyPairJwks, options: HolderOptions) {
  const { docRequests } = DeviceRequest.decode(base64url.decode(options.request.deviceRequest))
  const items = (docRequests[0] as (typeof docRequests)[number]).itemsRequest
  const [, info] = cbor.decode(base64url.decode(options.request.encryptionInfo)) as [
    string,
    Map<string, unknown>,
  ]
  const coseKey = info.get('recipientPublicKey') as Map<number, Uint8Array>
  const recipientJwk = options.recipient ?? {
    kty: 'EC',
    crv: 'P-256',
    x: base64url.encode(coseKey.get(-2) as Uint8Array),
    y: base64url.encode(coseKey.get(-3) as Uint8Array),
  }
  const dcapiInfoHash = createHash('sha256')
    .update(cbor.encode([options.request.encryptionInfo, options.origin]))
    .digest()
  const sessionTranscript = [null, null, ['dcapi', dcapiInfoHash]]

  const issuerSigned = cbor.decode(issued) as Map<string, unknown>
  const nameSpaces = new Map<string, unknown[]>()
  for (const [namespace, elements] of items.namespaces) {
    const all = (issuerSigned.get('nameSpaces') as Map<string, unknown[]>).get(namespace) ?? []
    nameSpaces.set(
      namespace,
      all.filter((item) =>
        elements.has(
          (cbor.decode(embedded(item)) as Map<string, unknown>).get('elementIdentifier') as string,
        ),
      ),
    )
  }
  const deviceNameSpaces = new Tag(cbor.encode(new Map()), 24)
  const deviceAuthentication = [
    'DeviceAuthentication',
    options.signOver ?? sessionTranscript,
    items.docType,
    deviceNameSpaces,
  ]
  const payload = cbor.encode(new Tag(cbor.encode(deviceAuthentication), 24))
  const protectedHeader = cbor.encode(new Map([[1, -7]]))
  const signature = sign('sha256', cbor.encode(['Signature1', protectedHeader, new Uint8Array(0), payload]), {
    key: createPrivateKey({ key: device.privateJwk as never, format: 'jwk' }),
    dsaEncoding: 'ieee-p1363',
  })
  const deviceResponse = cbor.encode(
    new Map<string, unknown>([
      ['version', '1.0'],
      [
        'documents',
        [
          new Map<string, unknown>([
            ['docType', items.docType],
            [
              'issuerSigned',
              new Map([
                ['nameSpaces', nameSpaces],
                ['issuerAuth', issuerSigned.get('issuerAuth')],
              ]),
            ],
            [
              'deviceSigned',
              new Map<string, unknown>([
                ['nameSpaces', deviceNameSpaces],
                ['deviceAuth', new Map([['deviceSignature', [protectedHeader, new Map(), null, signature]]])],
              ]),
            ],
          ]),
        ],
      ],
      ['status', 0],
    ]),
  )
  const hpke = suite()
  const sealed = await hpke.seal(
    {
      recipientPublicKey: await hpke.kem.importKey('jwk', recipientJwk, true),
      info: cbor.encode(sessionTranscript),
    },
    deviceResponse,
  )
  const response = cbor.encode([
    'dcapi',
    new Map([
      ['enc', new Uint8Array(sealed.enc)],
      ['cipherText', new Uint8Array(sealed.ct)],
    ]),
  ])
  return { response: base64url.encode(response), sessionTranscript: cbor.encode(sessionTranscript) }
}

describe('ISO/IEC 18013-7 Annex C (org-iso-mdoc over the Digital Credentials API)', () => {
  let root: X509Certificate
  let signer: Signer
  let device: KeyPairJwks
  let recipient: KeyPairJwks
  let issued: Uint8Array
  const nonce = randomBytes(16)

  beforeAll(async () => {
    const rootKeys = await generateKeyPair('ES256')
    const rootPem = await createCertificate({
      subjectPublicJwk: rootKeys.publicJwk,
      issuerPrivateJwk: rootKeys.privateJwk,
      subject: 'CN=Annex C test IACA,C=DE',
      validityDays: 2,
      ca: true,
    })
    root = new X509Certificate(rootPem)
    signer = await testSigner(async (pair) => [
      new X509Certificate(
        await createCertificate({
          subjectPublicJwk: pair.publicJwk,
          issuerPrivateJwk: rootKeys.privateJwk,
          issuerCertificate: rootPem,
          subject: 'CN=Annex C test DS,C=DE',
          validityDays: 1,
          documentSigner: true,
        }),
      ).raw.toString('base64'),
    ])
    device = await generateKeyPair('ES256')
    recipient = await generateKeyPair('ES256')
    issued = await issueMdoc({
      signer,
      docType: DOCTYPE,
      namespaces: { [NS]: { family_name: 'Mustermann', given_name: 'Erika', age_over_18: true } },
      deviceJwk: device.publicJwk,
      validFrom: new Date(Date.now() - 60_000),
      validUntil: new Date(Date.now() + 3_600_000),
      signedAt: new Date(Date.now() - 60_000),
    })
  })

  const request = () => annexCRequest({ credential: QUERY, nonce, recipientJwk: recipient.publicJwk })
  const open = (response: string, encryptionInfo: string, origin = ORIGIN, key = recipient.privateJwk) =>
    openAnnexCResponse({ response, encryptionInfo, origin, recipientPrivateJwk: key })
  const verify = (deviceResponse: Uint8Array, sessionTranscript: Uint8Array) =>
    verifyMdocPresentation({
      presentation: deviceResponse,
      docType: DOCTYPE,
      transcript: { kind: 'annex-c', sessionTranscript },
      anchors: [root],
      acceptAnyIssuer: false,
      now: new Date(),
      requireValidStatus: async () => {},
    })

  it('ISO/IEC 18013-7 C.2: the DeviceRequest (1.0, no reader auth) asks for the docType and elements of the DCQL query', async () => {
    const decoded = DeviceRequest.decode(base64url.decode((await request()).deviceRequest))
    expect(decoded.version).toBe('1.0')
    expect(decoded.docRequests).toHaveLength(1)
    const [docRequest] = decoded.docRequests
    expect(docRequest?.readerAuth).toBeUndefined()
    expect(docRequest?.itemsRequest.docType).toBe(DOCTYPE)
    expect([...(docRequest?.itemsRequest.namespaces ?? [])].map(([ns, els]) => [ns, [...els]])).toEqual([
      [
        NS,
        [
          ['family_name', true],
          ['age_over_18', false],
        ],
      ],
    ])
  })

  it('ISO/IEC 18013-7 C.2: the EncryptionInfo is ["dcapi", {nonce, recipientPublicKey}] with the nonce and the P-256 COSE_Key', async () => {
    const [label, info] = cbor.decode(base64url.decode((await request()).encryptionInfo)) as [
      string,
      Map<string, unknown>,
    ]
    expect(label).toBe('dcapi')
    expect([...info.keys()]).toEqual(['nonce', 'recipientPublicKey'])
    expect(Buffer.from(info.get('nonce') as Uint8Array).equals(nonce)).toBe(true)
    const key = info.get('recipientPublicKey') as Map<number, Uint8Array | number>
    expect(key.get(1)).toBe(2)
    expect(key.get(-1)).toBe(1)
    expect(base64url.encode(key.get(-2) as Uint8Array)).toBe(recipient.publicJwk.x)
    expect(base64url.encode(key.get(-3) as Uint8Array)).toBe(recipient.publicJwk.y)
  })

  it('ISO/IEC 18013-7 C.3: the SessionTranscript is [null, null, ["dcapi", SHA-256(CBOR([EncryptionInfo, origin]))]]', async () => {
    const { encryptionInfo } = await request()
    const hash = createHash('sha256')
      .update(cbor.encode([encryptionInfo, ORIGIN]))
      .digest()
    expect(Buffer.from(await annexCSessionTranscript(encryptionInfo, ORIGIN))).toEqual(
      Buffer.from(cbor.encode([null, null, ['dcapi', hash]])),
    )
  })

  it('ISO/IEC 18013-7 C.4: an HPKE-encrypted DeviceResponse opens and verifies, with only the requested elements', async () => {
    const sent = await request()
    const wallet = await holderRespond(issued, device, { request: sent, origin: ORIGIN })
    const opened = await open(wallet.response, sent.encryptionInfo)
    expect(Buffer.from(opened.sessionTranscript)).toEqual(Buffer.from(wallet.sessionTranscript))
    expect(await verify(opened.deviceResponse, opened.sessionTranscript)).toEqual({
      [NS]: { family_name: 'Mustermann', age_over_18: true },
    })
  })

  it('ISO/IEC 18013-7 C.4, RFC 9180: a tampered ciphertext is refused', async () => {
    const sent = await request()
    const wallet = await holderRespond(issued, device, { request: sent, origin: ORIGIN })
    const [label, body] = cbor.decode(base64url.decode(wallet.response)) as [string, Map<string, Uint8Array>]
    const cipherText = Uint8Array.from(body.get('cipherText') as Uint8Array)
    cipherText[10] = (cipherText[10] as number) ^ 1
    body.set('cipherText', cipherText)
    const tampered = base64url.encode(cbor.encode([label, body]))
    await expect(open(tampered, sent.encryptionInfo)).rejects.toThrow(PresentationRejected)
    await expect(open(tampered, sent.encryptionInfo)).rejects.toThrow('does not decrypt')
  })

  it('ISO/IEC 18013-7 C.3: a response made for another origin (another SessionTranscript) does not decrypt', async () => {
    const sent = await request()
    const wallet = await holderRespond(issued, device, { request: sent, origin: 'https://evil.example' })
    await expect(open(wallet.response, sent.encryptionInfo)).rejects.toThrow('does not decrypt')
    // The holder encrypted for https://evil.example: it opens only there.
    await expect(open(wallet.response, sent.encryptionInfo, 'https://evil.example')).resolves.toBeDefined()
  })

  it('ISO/IEC 18013-7 C.4: a response for another request (another EncryptionInfo) does not decrypt', async () => {
    const sent = await request()
    // Same key, a fresh nonce: another EncryptionInfo.
    const other = await annexCRequest({
      credential: QUERY,
      nonce: randomBytes(16),
      recipientJwk: recipient.publicJwk,
    })
    expect(other.encryptionInfo).not.toBe(sent.encryptionInfo)
    const wallet = await holderRespond(issued, device, { request: other, origin: ORIGIN })
    await expect(open(wallet.response, sent.encryptionInfo)).rejects.toThrow('does not decrypt')
  })

  it('ISO 18013-5 §9.1.3, ISO/IEC 18013-7 C.3: a DeviceResponse signed over another SessionTranscript is refused', async () => {
    const sent = await request()
    const hash = createHash('sha256')
      .update(cbor.encode([sent.encryptionInfo, 'https://evil.example']))
      .digest()
    const wallet = await holderRespond(issued, device, {
      request: sent,
      origin: ORIGIN,
      signOver: [null, null, ['dcapi', hash]],
    })
    // The encryption is right, the device signature is not.
    const opened = await open(wallet.response, sent.encryptionInfo)
    await expect(verify(opened.deviceResponse, opened.sessionTranscript)).rejects.toThrow(
      'the mdoc did not verify: Device signature must be valid',
    )
  })

  it('ISO/IEC 18013-7 C.4, RFC 9180: a response encrypted to another key is refused', async () => {
    const sent = await request()
    const stranger = await generateKeyPair('ES256')
    const wallet = await holderRespond(issued, device, {
      request: sent,
      origin: ORIGIN,
      recipient: stranger.publicJwk,
    })
    await expect(open(wallet.response, sent.encryptionInfo)).rejects.toThrow('does not decrypt')
    // Only the stranger's key opens it.
    await expect(
      open(wallet.response, sent.encryptionInfo, ORIGIN, stranger.privateJwk),
    ).resolves.toBeDefined()
  })

  it('ISO/IEC 18013-7 C.4, S-128: garbage, non-base64url and hostile CBOR are refused before decryption', async () => {
    const { encryptionInfo } = await request()
    const refused = async (response: string, reason: string) => {
      const attempt = open(response, encryptionInfo)
      await expect(attempt).rejects.toThrow(PresentationRejected)
      await expect(attempt).rejects.toThrow(reason)
    }
    await refused('not base64url!', 'not base64url')
    await refused('', 'not base64url')
    await refused(base64url.encode(randomBytes(1).fill(0xff)), 'refused before decoding')
    // A bignum: cbor-x decodes it in quadratic time.
    await refused(base64url.encode(Buffer.from([0xc2, 0x58, 0x20, ...randomBytes(32)])), 'a bignum')
    await refused(base64url.encode(Buffer.from([0x9f, 0xff])), 'indefinite-length')
    await refused(
      base64url.encode(cbor.encode(['dcapi', new Map([['enc', 'x']])])),
      'not an EncryptedResponse',
    )
    // An EncryptedResponse wrapped in tag 24 is not one.
    const body = new Map([
      ['enc', new Uint8Array(65)],
      ['cipherText', new Uint8Array(32)],
    ])
    await refused(
      base64url.encode(cbor.encode(new Tag(cbor.encode(['dcapi', body]), 24))),
      'not an EncryptedResponse',
    )
    await refused(
      base64url.encode(
        cbor.encode([
          'other',
          new Map([
            ['enc', new Uint8Array(65)],
            ['cipherText', new Uint8Array(32)],
          ]),
        ]),
      ),
      'not an EncryptedResponse',
    )
    await refused(
      base64url.encode(
        cbor.encode([
          'dcapi',
          new Map([
            ['enc', new Uint8Array(65)],
            ['cipherText', new Uint8Array(32)],
          ]),
        ]),
      ),
      'does not decrypt',
    )
  })

  it('OpenID4VP 1.0 §6 and B.2: a query the DeviceRequest cannot express is refused', async () => {
    const refuse = (credential: Record<string, unknown>, reason: string) =>
      expect(
        annexCRequest({
          credential: { ...QUERY, ...credential } as typeof QUERY,
          nonce,
          recipientJwk: recipient.publicJwk,
        }),
      ).rejects.toThrow(reason)
    await refuse({ claims: [{ path: [NS, 'driving_privileges', 0] }] }, 'not [namespace, element]')
    await refuse({ claims: [{ path: [NS, null] }] }, 'not [namespace, element]')
    await refuse({ claims: undefined }, 'a query without claims')
    await refuse({ claims: [] }, 'a query without claims')
    await refuse({ multiple: true }, 'multiple')
    await refuse({ claim_sets: [['a']] }, 'claim_sets')
    await refuse({ format: 'dc+sd-jwt', meta: { vct_values: ['urn:x'] } }, 'asks for an mso_mdoc credential')
    await expect(
      annexCRequest({ credential: QUERY, nonce: randomBytes(15), recipientJwk: recipient.publicJwk }),
    ).rejects.toThrow('at least 16 bytes')
    await expect(
      annexCRequest({ credential: QUERY, nonce, recipientJwk: recipient.privateJwk }),
    ).rejects.toThrow('public P-256')
  })
})
