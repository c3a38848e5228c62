import { createPrivateKey, randomBytes, sign, X509Certificate } from 'node:crypto'
import { formatSpec } from '@credential-service/core-domain'
import { Encoder, Tag } from 'cbor-x'
import { beforeAll, describe, expect, it } from 'vitest'
import { createCertificate } from '../src/certificates'
import { generateKeyPair, type KeyPairJwks } from '../src/keys'
import { issueMdoc, verifyMdocPresentation } from '../src/mdoc'
import { COSE_ALG } from '../src/mdoc/issue'
import type { SigningAlgorithm } from '../src/signer'
import { testSigner } from './test-signer'

// The holder's own CBOR, as ISO 18013-5 uses it: plain byte strings, maps kept as maps.
const cbor = new Encoder({
  useRecords: false,
  tagUint8Array: false,
  mapsAsObjects: false,
  variableMapSize: true,
})

const DOCTYPE = 'org.iso.18013.5.1.mDL'
const NS = 'org.iso.18013.5.1'
/** An ISO/IEC 18013-7 Annex C SessionTranscript ([null, null, ["dcapi", hash]]): the device signs over it. */
const SESSION_TRANSCRIPT = cbor.encode([null, null, ['dcapi', randomBytes(32)]])
const HASH = { ES256: 'sha256', ES384: 'sha384', EdDSA: null } as const

/** A holder's DeviceResponse (ISO 18013-5 §8.3.2.1.2.2) signing DeviceAuthentication with its device key. */
function deviceResponse(issued: Uint8Array, device: KeyPairJwks) {
  const issuerSigned = cbor.decode(issued) as Map<string, unknown>
  const deviceNameSpaces = new Tag(cbor.encode(new Map()), 24)
  const deviceAuthentication = [
    'DeviceAuthentication',
    cbor.decode(SESSION_TRANSCRIPT),
    DOCTYPE,
    deviceNameSpaces,
  ]
  const payload = cbor.encode(new Tag(cbor.encode(deviceAuthentication), 24))
  const protectedHeader = cbor.encode(new Map([[1, COSE_ALG[device.alg]]]))
  const signature = sign(
    HASH[device.alg],
    cbor.encode(['Signature1', protectedHeader, new Uint8Array(0), payload]),
    { key: createPrivateKey({ key: device.privateJwk as never, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
  )
  return cbor.encode(
    new Map<string, unknown>([
      ['version', '1.0'],
      [
        'documents',
        [
          new Map<string, unknown>([
            ['docType', DOCTYPE],
            ['issuerSigned', issuerSigned],
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
}

describe('mdoc issuer and device keys on P-256 and P-384', () => {
  let rootPem: string
  let rootKeys: KeyPairJwks

  beforeAll(async () => {
    rootKeys = await generateKeyPair('ES256')
    rootPem = await createCertificate({
      subjectPublicJwk: rootKeys.publicJwk,
      issuerPrivateJwk: rootKeys.privateJwk,
      subject: 'CN=P-384 test IACA,C=DE',
      validityDays: 2,
      ca: true,
    })
  })

  async function present(issuerAlg: SigningAlgorithm, deviceAlg: SigningAlgorithm) {
    const signer = await testSigner(
      async (pair) => [
        new X509Certificate(
          await createCertificate({
            subjectPublicJwk: pair.publicJwk,
            issuerPrivateJwk: rootKeys.privateJwk,
            issuerCertificate: rootPem,
            subject: 'CN=P-384 test DS,C=DE',
            validityDays: 1,
            documentSigner: true,
          }),
        ).raw.toString('base64'),
      ],
      issuerAlg,
    )
    const device = await generateKeyPair(deviceAlg)
    const issued = await issueMdoc({
      signer,
      docType: DOCTYPE,
      namespaces: { [NS]: { family_name: 'Mustermann', age_over_18: true } },
      deviceJwk: device.publicJwk,
      validFrom: new Date(Date.now() - 60_000),
      validUntil: new Date(Date.now() + 3_600_000),
      signedAt: new Date(Date.now() - 60_000),
    })
    return verifyMdocPresentation({
      presentation: deviceResponse(issued, device),
      docType: DOCTYPE,
      transcript: { kind: 'annex-c', sessionTranscript: SESSION_TRANSCRIPT },
      anchors: [new X509Certificate(rootPem)],
      acceptAnyIssuer: false,
      now: new Date(),
      requireValidStatus: async () => {},
    })
  }

  it.each([
    ['ES256', 'ES256'],
    ['ES384', 'ES256'],
    ['ES256', 'ES384'],
    ['ES384', 'ES384'],
  ] as const)(
    'ISO 18013-5 §9.1.2.4 / OpenID4VP B.2.2 issuerauth_alg_values and deviceauth_alg_values (-7, -35): issuerAuth %s, device key %s verifies',
    async (issuerAlg, deviceAlg) => {
      await expect(present(issuerAlg, deviceAlg)).resolves.toEqual({
        [NS]: { family_name: 'Mustermann', age_over_18: true },
      })
    },
  )

  it.each(['ES256', 'ES384', 'EdDSA'] as const)(
    'I-08, issue 42 item 6: the IssuerAuth alg of a %s issuer is the first id the metadata advertises (ISO 18013-5 §9.1.3.6: -7, -35, -8), then its RFC 9864 fully specified id',
    async (alg) => {
      const signer = await testSigner(async () => [], alg)
      const issued = await issueMdoc({
        signer,
        docType: DOCTYPE,
        namespaces: { [NS]: { family_name: 'Mustermann' } },
        deviceJwk: (await generateKeyPair('ES256')).publicJwk,
        validFrom: new Date(Date.now() - 60_000),
        validUntil: new Date(Date.now() + 3_600_000),
        signedAt: new Date(Date.now() - 60_000),
      })
      const issuerAuth = (cbor.decode(issued) as Map<string, unknown>).get('issuerAuth') as unknown[]
      const headerAlg = (cbor.decode(issuerAuth[0] as Uint8Array) as Map<number, number>).get(1)
      const advertised = formatSpec('mso_mdoc').signingAlgValues(alg)
      expect(advertised).toStrictEqual({ ES256: [-7, -9], ES384: [-35, -51], EdDSA: [-8, -19] }[alg])
      expect(headerAlg).toBe(advertised[0])
    },
  )
})
