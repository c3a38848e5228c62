import { type KeyObject, verify } from 'node:crypto'
import { checkCbor } from './cbor-guard'
import { loadCbor } from './mdoc/cbor'
import { loadMdoc } from './mdoc/context'
import { COSE_ALG, jwkToCoseKey } from './mdoc/issue'
import { hashFor, type Signer } from './signer'
import { inflateStatusList, type StatusList, StatusListError } from './status-list-token'

/** Media type and COSE `typ` (RFC 9596) of a Status List Token in CWT form (TSL §5.2, §8.1). */
export const STATUS_LIST_CWT_TYPE = 'application/statuslist+cwt'

/** COSE header labels (RFC 9052 §3.1, RFC 9360 §2, RFC 9596 §2). */
const ALG = 1
const TYP = 16
const X5CHAIN = 33
/** CWT claim keys (RFC 8392 §4; TSL §5.2 and its IANA registrations for ttl and status_list). */
const SUB = 2
const EXP = 4
const IAT = 6
const STATUS_LIST = 65533
const TTL = 65534

export interface SignStatusListCwtOptions {
  signer: Signer
  /** The list's URI, `sub` (2). */
  uri: string
  bits: number
  /** The DEFLATE-compressed list, the same bytes the JWT form carries base64url-encoded. */
  lst: Uint8Array
  issuedAt: Date
  expiresAt: Date
  ttlSeconds: number
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/**
 * A Status List Token as CWT (draft-ietf-oauth-status-list §5.2, checklist F-30, F-31): a tagged
 * COSE_Sign1 whose protected header holds `alg`, `typ` application/statuslist+cwt and the key
 * chain's certificates as `x5chain`, over the claims `sub`, `iat`, `exp`, `ttl` and `status_list`
 * {bits, lst}. @owf/mdoc builds the Sig_structure; the Signer port signs it.
 */
export async function signStatusListCwt(options: SignStatusListCwtOptions): Promise<Uint8Array> {
  const [{ mdoc }, { cbor, Tag }] = await Promise.all([loadMdoc(), loadCbor()])
  const { signer } = options
  const x5chain = signer.x5c.map((der) => new Uint8Array(Buffer.from(der, 'base64')))
  const protectedHeaders = new Map<number, unknown>([
    [ALG, COSE_ALG[signer.alg]],
    [TYP, STATUS_LIST_CWT_TYPE],
  ])
  if (x5chain.length) protectedHeaders.set(X5CHAIN, x5chain.length === 1 ? x5chain[0] : x5chain)
  const claims = new Map<number, unknown>([
    [SUB, options.uri],
    [IAT, seconds(options.issuedAt)],
    [EXP, seconds(options.expiresAt)],
    [TTL, options.ttlSeconds],
    [
      STATUS_LIST,
      new Map<string, unknown>([
        ['bits', options.bits],
        ['lst', options.lst],
      ]),
    ],
  ])
  const sign1 = await mdoc.Sign1.create(
    {
      protectedHeaders,
      payload: cbor.encode(claims),
      // Only named for the library: the Signer signs. (CoseKey.fromJwk refuses P-384 JWKs.)
      signingKey: mdoc.CoseKey.fromEncodedStructure(jwkToCoseKey(signer.publicJwk)),
    },
    {
      cose: {
        sign1: { sign: ({ toBeSigned }) => signer.sign(toBeSigned), verify: () => false },
        mac0: { sign: () => new Uint8Array(), verify: () => false },
      },
    },
  )
  return cbor.encode(new Tag(sign1.encodedStructure, 18))
}

/** A Status List Token in CWT form, decoded but not yet trusted. */
export interface StatusListCwt {
  /** The protected `typ` (16). */
  typ: unknown
  /** `x5chain` (33) as base64 DER, leaf first: the form of `x5c`, for the same chain checks. */
  x5c: string[]
  sub: unknown
  iat: unknown
  exp: unknown
  ttl: unknown
  /** Whether the COSE_Sign1 signature verifies with `key` under the protected `alg`. */
  verify(key: KeyObject): boolean
  /** The inflated list (TSL §4.3); call it once the signature verified. Throws StatusListError. */
  list(): StatusList
}

/** COSE algorithms we verify, with the key each needs (RFC 9053 §2, RFC 9864 fully specified). */
const VERIFY_ALGS = new Map<number, { alg: 'ES256' | 'ES384' | 'EdDSA'; key: string }>([
  [-7, { alg: 'ES256', key: 'prime256v1' }],
  [-9, { alg: 'ES256', key: 'prime256v1' }],
  [-35, { alg: 'ES384', key: 'secp384r1' }],
  [-51, { alg: 'ES384', key: 'secp384r1' }],
  [-8, { alg: 'EdDSA', key: 'ed25519' }],
  [-19, { alg: 'EdDSA', key: 'ed25519' }],
])

const field = (map: unknown, key: number | string): unknown => (map instanceof Map ? map.get(key) : undefined)

/**
 * Decodes a Status List Token in CWT form (TSL §5.2, §8.3) fetched from anyone: the bytes pass the
 * CBOR pre-scan (checklist S-123) before a decoder sees them, then @owf/mdoc reads the COSE_Sign1
 * (tagged or not) and the claims are read from its payload. Throws StatusListError when it is not
 * a COSE_Sign1 carrying a CWT claims map.
 */
export async function decodeStatusListCwt(bytes: Uint8Array): Promise<StatusListCwt> {
  const checked = checkCbor(bytes)
  if (!checked.ok) throw new StatusListError(`is refused as CBOR: ${checked.reason}`)
  const [{ mdoc }, { cbor }] = await Promise.all([loadMdoc(), loadCbor()])
  let sign1: InstanceType<typeof mdoc.Sign1>
  let claims: unknown
  try {
    sign1 = mdoc.Sign1.decode(bytes)
    claims = sign1.payload ? cbor.decode(sign1.payload) : undefined
  } catch {
    throw new StatusListError('is not a COSE_Sign1')
  }
  if (!(claims instanceof Map)) throw new StatusListError('has no CWT claims')
  const headers = sign1.protectedHeaders.headers
  const x5chain = sign1.x5chain ?? []
  return {
    typ: headers?.get(TYP),
    x5c: x5chain.map((der) => Buffer.from(der).toString('base64')),
    sub: claims.get(SUB),
    iat: claims.get(IAT),
    exp: claims.get(EXP),
    ttl: claims.get(TTL),
    verify(key) {
      const algorithm = VERIFY_ALGS.get(headers?.get(ALG) as number)
      const curve = key.asymmetricKeyType === 'ed25519' ? 'ed25519' : key.asymmetricKeyDetails?.namedCurve
      if (!algorithm || algorithm.key !== curve) return false
      const hash = hashFor(algorithm.alg)
      return verify(hash, sign1.toBeSigned, { key, dsaEncoding: 'ieee-p1363' }, sign1.signature)
    },
    list() {
      const statusList = claims.get(STATUS_LIST)
      if (!(statusList instanceof Map)) throw new StatusListError('has no status_list claim')
      const lst = field(statusList, 'lst')
      return inflateStatusList(field(statusList, 'bits'), lst instanceof Uint8Array ? lst : new Uint8Array())
    },
  }
}
