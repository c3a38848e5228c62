import { createHash, randomBytes, randomInt } from 'node:crypto'
import type { Tag as TagClass } from 'cbor-x'
import { base64url, type JWK } from 'jose'
import type { Signer } from '../signer'
import { loadCbor } from './cbor'
import { signCoseSign1 } from './cose-sign1'

export { COSE_ALG } from './cose-sign1'

const COSE_CRV: Record<string, number> = { 'P-256': 1, 'P-384': 2, Ed25519: 6 }

/** The JWK `crv` of a COSE curve id (RFC 9053 §7.1), undefined for curves we do not use. */
export const jwkCurveOf = (coseCurve: unknown) =>
  Object.keys(COSE_CRV).find((name) => COSE_CRV[name] === coseCurve)

/** A public JWK as COSE_Key (RFC 9052 §7, RFC 9053 §7.1). */
export function jwkToCoseKey(jwk: JWK): Map<number, unknown> {
  const crv = COSE_CRV[String(jwk.crv)]
  if (crv === undefined) throw new Error(`no COSE curve for ${String(jwk.crv)}`)
  const key = new Map<number, unknown>([
    [1, jwk.kty === 'OKP' ? 1 : 2],
    [-1, crv],
    [-2, base64url.decode(jwk.x as string)],
  ])
  if (jwk.kty === 'EC') key.set(-3, base64url.decode(jwk.y as string))
  return key
}

export interface IssueMdocOptions {
  signer: Signer
  docType: string
  /** Element values per namespace: `{ "org.iso.18013.5.1": { family_name: "…" } }`. */
  namespaces: Record<string, Record<string, unknown>>
  /** Holder key for `deviceKeyInfo`. */
  deviceJwk: JWK
  validFrom: Date
  validUntil: Date
  signedAt: Date
  /** Elements (`namespace/element`) whose string value is a full-date, encoded with tag 1004 (RFC 8943). */
  fullDates?: ReadonlySet<string>
  /** Status list entry, in the MSO as `status` {`status_list` {idx, uri}} (TSL §6.3, ISO 18013-5 2nd ed.). */
  status?: { idx: number; uri: string } | undefined
}

/**
 * Issues an mdoc as `IssuerSigned` (ISO 18013-5 §8.3.2.1.2.2): one IssuerSignedItem per element
 * with a random salt, the MSO carrying their SHA-256 value digests, the device key and validity,
 * and `issuerAuth` as COSE_Sign1 (RFC 9052 §4.2) with the certificate chain in `x5chain` (label 33).
 * Returns the CBOR bytes.
 */
export async function issueMdoc(options: IssueMdocOptions): Promise<Uint8Array> {
  const { cbor, Tag } = await loadCbor()
  /** tdate (RFC 8949 tag 0) without fractional seconds, as ISO 18013-5 §9.1.2.4 uses. */
  const tdate = (date: Date) => new Tag(`${date.toISOString().slice(0, 19)}Z`, 0)
  const nameSpaces: Record<string, TagClass[]> = {}
  const valueDigests = new Map<string, Map<number, Uint8Array>>()
  let digestId = 0
  for (const [namespace, elements] of Object.entries(options.namespaces)) {
    const items: TagClass[] = []
    const digests = new Map<number, Uint8Array>()
    // Digest ids are not in element order, so their order says nothing about the elements (§9.1.2.5).
    const shuffled = Object.entries(elements)
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = randomInt(i + 1)
      ;[shuffled[i], shuffled[j]] = [shuffled[j] as [string, unknown], shuffled[i] as [string, unknown]]
    }
    for (const [elementIdentifier, value] of shuffled) {
      const elementValue = options.fullDates?.has(`${namespace}/${elementIdentifier}`)
        ? new Tag(value, 1004)
        : value
      const item = { digestID: digestId, random: randomBytes(32), elementIdentifier, elementValue }
      const tagged = new Tag(cbor.encode(item), 24)
      digests.set(digestId, createHash('sha256').update(cbor.encode(tagged)).digest())
      items.push(tagged)
      digestId++
    }
    nameSpaces[namespace] = items
    valueDigests.set(namespace, digests)
  }
  const mso = {
    version: '1.0',
    digestAlgorithm: 'SHA-256',
    valueDigests,
    deviceKeyInfo: { deviceKey: jwkToCoseKey(options.deviceJwk) },
    docType: options.docType,
    validityInfo: {
      signed: tdate(options.signedAt),
      validFrom: tdate(options.validFrom),
      validUntil: tdate(options.validUntil),
    },
    ...(options.status ? { status: { status_list: options.status } } : {}),
  }
  const payload = cbor.encode(new Tag(cbor.encode(mso), 24))
  const issuerAuth = await signCoseSign1(options.signer, payload)
  return cbor.encode({ nameSpaces, issuerAuth })
}
