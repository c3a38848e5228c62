import { X509Certificate } from 'node:crypto'
import { Encoder, Tag } from 'cbor-x'
import { describe, expect, it } from 'vitest'
import { CBOR_LIMITS, checkCbor } from '../src/cbor-guard'
import { createCertificate } from '../src/certificates'
import { generateKeyPair } from '../src/keys'
import { issueMdoc, msoStatusEntry } from '../src/mdoc'
import { testSigner } from './test-signer'

// CBOR as ISO 18013-5 uses it (the issuer's settings): plain byte strings, maps kept as maps.
const cbor = new Encoder({
  useRecords: false,
  tagUint8Array: false,
  mapsAsObjects: false,
  variableMapSize: true,
})
const bytes = (...parts: (number[] | Uint8Array)[]) => Buffer.concat(parts.map((part) => Buffer.from(part)))
const refused = (reason: string) => ({ ok: false, reason })

/** A plausible DeviceResponse (ISO 18013-5 §8.3.2.1.2.2) around `status` and `documents`. */
const deviceResponse = (status: unknown, documents: unknown[] = []) =>
  cbor.encode({ version: '1.0', documents, status })

/** An mdoc from our issuer in a DeviceResponse, as the test wallet sends it (without a real device signature). */
async function realDeviceResponse() {
  const signer = await testSigner(async (pair) => {
    const pem = await createCertificate({
      subjectPublicJwk: pair.publicJwk,
      issuerPrivateJwk: pair.privateJwk,
      subject: 'CN=cbor guard test,C=DE',
      validityDays: 1,
    })
    return [new X509Certificate(pem).raw.toString('base64')]
  })
  const holder = await generateKeyPair('ES256')
  const issuerSigned = await issueMdoc({
    signer,
    docType: 'org.iso.18013.5.1.mDL',
    namespaces: {
      'org.iso.18013.5.1': {
        family_name: 'Mustermann',
        birth_date: '1964-08-12',
        age_over_18: true,
        portrait: new Uint8Array(5000),
        driving_privileges: [
          {
            vehicle_category_code: 'B',
            issue_date: '2020-01-01',
            codes: [{ code: '96', sign: '<=', value: '1' }],
          },
        ],
      },
    },
    deviceJwk: holder.publicJwk,
    validFrom: new Date(),
    validUntil: new Date(Date.now() + 86_400_000),
    signedAt: new Date(),
    fullDates: new Set(['org.iso.18013.5.1/birth_date']),
    status: { idx: 7, uri: 'https://issuer.example/status/1' },
  })
  const protectedHeader = cbor.encode(new Map([[1, -7]]))
  return deviceResponse(0, [
    {
      docType: 'org.iso.18013.5.1.mDL',
      issuerSigned: cbor.decode(issuerSigned),
      deviceSigned: {
        nameSpaces: new Tag(cbor.encode(new Map()), 24),
        deviceAuth: { deviceSignature: [protectedHeader, new Map(), null, new Uint8Array(64)] },
      },
    },
  ])
}

/** CPU milliseconds of a `process.cpuUsage` difference: a busy machine does not stretch it. */
const cpuMs = (used: NodeJS.CpuUsage) => (used.user + used.system) / 1000

describe('CBOR guard (S-123, S-128; RFC 8949 §10)', () => {
  it('S-128 / ISO 18013-5 §8.3.2.1.2.2: a DeviceResponse around an mdoc from our issuer passes', async () => {
    const real = await realDeviceResponse()
    expect(checkCbor(real)).toStrictEqual({ ok: true })
    // 13 levels and 168 items: well within the limits, which leave room for larger element values.
    expect(checkCbor(real, { maxDepth: 13 })).toStrictEqual({ ok: true })
    expect(checkCbor(real, { maxDepth: 12 }).ok).toBe(false)
  })

  it('S-128 / RFC 8949 §3.4.3: bignums (tags 2 and 3) are refused, however small, before any decoding', () => {
    const big = new Uint8Array(400 * 1024).fill(0xff)
    const started = process.cpuUsage()
    expect(checkCbor(deviceResponse(new Tag(big, 2)))).toStrictEqual(
      refused('a bignum (tag 2), which no mdoc or COSE structure uses'),
    )
    expect(cpuMs(process.cpuUsage(started))).toBeLessThan(100)
    expect(checkCbor(deviceResponse(new Tag(new Uint8Array([1]), 3)))).toStrictEqual(
      refused('a bignum (tag 3), which no mdoc or COSE structure uses'),
    )
  })

  it('S-128 / RFC 8949 §3.4: tags that ISO 18013-5 and COSE do not use are refused', () => {
    // 28/29 are cbor-x shared references, 32 a URI, 55799 self-described CBOR, 4 a decimal fraction.
    for (const tag of [4, 28, 29, 32, 105, 55799, 0xffffffff]) {
      expect(checkCbor(deviceResponse(new Tag('x', tag)))).toStrictEqual(
        refused(`tag ${tag}, which no mdoc or COSE structure uses`),
      )
    }
    // The tags mdoc uses, each around the type it needs.
    expect(checkCbor(cbor.encode(new Tag(7, 0)))).toStrictEqual(refused('tag 0 encloses an unsigned integer'))
    expect(checkCbor(cbor.encode(new Tag('x', 24)))).toStrictEqual(refused('tag 24 encloses a text string'))
    expect(checkCbor(cbor.encode(new Tag(1_700_000_000, 1)))).toStrictEqual({ ok: true })
    expect(checkCbor(cbor.encode(new Tag('2024-01-01', 1004)))).toStrictEqual({ ok: true })
  })

  it('S-123 / RFC 8949 §10: a declared length beyond the input is refused without allocating it', () => {
    // A byte string, a text string, an array and a map that each claim 2^63 - 1 or 2^32 - 1 entries.
    const huge = [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    expect(checkCbor(bytes([0x5b], huge))).toStrictEqual(
      refused(`a declared length of ${2 ** 63} runs past the input`),
    )
    expect(checkCbor(bytes([0x7a, 0xff, 0xff, 0xff, 0xff], [0x61]))).toStrictEqual(
      refused('a declared length of 4294967295 runs past the input'),
    )
    expect(checkCbor(bytes([0x9a, 0xff, 0xff, 0xff, 0xff], [0]))).toStrictEqual(
      refused('a declared length of 4294967295 runs past the input'),
    )
    expect(checkCbor(bytes([0xba, 0x00, 0x01, 0x00, 0x00], new Uint8Array(1000)))).toStrictEqual(
      refused('a declared length of 65536 runs past the input'),
    )
    expect(checkCbor(bytes([0x1b, 0, 0]))).toStrictEqual(refused('the input ends inside an item'))
  })

  it('S-123: nesting 10,000 deep is refused at the depth limit', () => {
    expect(checkCbor(bytes(new Array(10_000).fill(0x81), [0]))).toStrictEqual(
      refused(`nesting deeper than ${CBOR_LIMITS.maxDepth} levels`),
    )
    expect(checkCbor(bytes(new Array(10_000).fill([0xa1, 0x60]).flat(), [0]))).toStrictEqual(
      refused(`nesting deeper than ${CBOR_LIMITS.maxDepth} levels`),
    )
    // Exactly at the limit passes.
    const atLimit = bytes(new Array(CBOR_LIMITS.maxDepth).fill(0x81), [0])
    expect(checkCbor(atLimit)).toStrictEqual({ ok: true })
  })

  it('S-123 / RFC 8949 §3.2: indefinite lengths, and a break outside one, are refused', () => {
    expect(checkCbor(bytes([0x9f, 0x01, 0xff]))).toStrictEqual(refused('an indefinite-length item'))
    expect(checkCbor(bytes([0xbf, 0x60, 0x01, 0xff]))).toStrictEqual(refused('an indefinite-length item'))
    expect(checkCbor(bytes([0x5f, 0x41, 0x00, 0xff]))).toStrictEqual(refused('an indefinite-length item'))
    expect(checkCbor(bytes([0x81, 0xff]))).toStrictEqual(refused('a break outside an indefinite-length item'))
  })

  it('S-128: more items than the budget is refused, counting a declared count before reading it', () => {
    const many = cbor.encode(new Array(CBOR_LIMITS.maxItems + 1).fill(0))
    expect(checkCbor(many)).toStrictEqual(refused(`more than ${CBOR_LIMITS.maxItems} data items`))
    // Small items spread over nested arrays count the same.
    const spread = cbor.encode(new Array(200).fill(new Array(200).fill(0)))
    expect(checkCbor(spread)).toStrictEqual(refused(`more than ${CBOR_LIMITS.maxItems} data items`))
    expect(checkCbor(cbor.encode([1, 2, 3]), { maxItems: 3 })).toStrictEqual(
      refused('more than 3 data items'),
    )
    expect(checkCbor(cbor.encode([1, 2, 3]), { maxItems: 4 })).toStrictEqual({ ok: true })
  })

  it('S-128 / RFC 8949 §3.4.5.1: the CBOR inside tag 24 is checked too, against the same budget', () => {
    const hostile = new Tag(cbor.encode(new Tag(new Uint8Array(1000), 2)), 24)
    expect(checkCbor(deviceResponse(hostile))).toStrictEqual(
      refused('a bignum (tag 2), which no mdoc or COSE structure uses'),
    )
    const truncated = new Tag(new Uint8Array([0x82, 0x01, 0x19]), 24)
    expect(checkCbor(deviceResponse(truncated))).toStrictEqual(refused('the input ends inside an item'))
    const deep = new Tag(bytes(new Array(100).fill(0x81), [0]), 24)
    expect(checkCbor(cbor.encode(deep))).toStrictEqual(
      refused(`nesting deeper than ${CBOR_LIMITS.maxDepth} levels`),
    )
    // Each part is within the budget, together they are not.
    const half = cbor.encode(new Array(CBOR_LIMITS.maxItems / 2).fill(0))
    expect(checkCbor(cbor.encode([new Tag(half, 24), new Tag(half, 24)]))).toStrictEqual(
      refused(`more than ${CBOR_LIMITS.maxItems} data items`),
    )
  })

  it('S-128 / RFC 9052 §4.2: the protected header and payload of issuerAuth are checked as CBOR', () => {
    const bignum = cbor.encode(new Tag(new Uint8Array(1000), 2))
    const issuerAuth = (protectedHeader: Uint8Array, payload: Uint8Array | null) => [
      { issuerSigned: { issuerAuth: [protectedHeader, new Map(), payload, new Uint8Array(64)] } },
    ]
    const mso = cbor.encode(new Tag(cbor.encode({ version: '1.0' }), 24))
    expect(checkCbor(deviceResponse(0, issuerAuth(cbor.encode(new Map([[1, -7]])), mso)))).toStrictEqual({
      ok: true,
    })
    for (const documents of [issuerAuth(bignum, mso), issuerAuth(new Uint8Array(0), bignum)]) {
      expect(checkCbor(deviceResponse(0, documents))).toStrictEqual(
        refused('a bignum (tag 2), which no mdoc or COSE structure uses'),
      )
    }
    // Tagged COSE_Sign1 (tag 18) likewise.
    expect(checkCbor(cbor.encode(new Tag([bignum, new Map(), null, new Uint8Array(64)], 18)))).toStrictEqual(
      refused('a bignum (tag 2), which no mdoc or COSE structure uses'),
    )
  })

  it('S-128 / TSL §6.3: msoStatusEntry refuses a hostile MSO payload before decoding it', async () => {
    const payload = cbor.encode(new Tag(cbor.encode(new Tag(new Uint8Array(400 * 1024).fill(0xff), 2)), 24))
    const started = process.cpuUsage()
    await expect(msoStatusEntry(payload)).rejects.toThrow(
      'the IssuerAuth payload is refused: a bignum (tag 2), which no mdoc or COSE structure uses',
    )
    expect(cpuMs(process.cpuUsage(started))).toBeLessThan(100)
  })

  it('RFC 8949 §3, §4: malformed or unused encodings are refused', () => {
    expect(checkCbor(new Uint8Array(0))).toStrictEqual(refused('the input ends inside an item'))
    expect(checkCbor(bytes([0x01, 0x02]))).toStrictEqual(refused('bytes after the CBOR item'))
    expect(checkCbor(bytes([0x1c]))).toStrictEqual(refused('reserved additional information 28'))
    expect(checkCbor(bytes([0xf8, 0xff]))).toStrictEqual(
      refused('a simple value other than false, true, null or undefined'),
    )
    expect(checkCbor(bytes([0x83, 0xf4, 0xf6, 0xfb], new Uint8Array(8)))).toStrictEqual({ ok: true })
  })
})
