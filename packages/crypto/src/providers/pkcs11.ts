import { createHash, randomBytes } from 'node:crypto'
import { endianness } from 'node:os'
import { base64url, type JWK } from 'jose'
import type { SigningAlgorithm } from '../signer'
import { openToken, type Pkcs11TokenOptions, type TokenSession } from './pkcs11-token'
import { type KeyProvider, KeyProviderError, type ProvidedKey } from './provider'
import { tracedKeyProvider } from './traced'

export type Pkcs11Options = Pkcs11TokenOptions

// PKCS#11 3.0 values the 2.40 binding has no names for (§2.3.5, §6.3).
const CKK_EC_EDWARDS = 0x40
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055
const CKM_EDDSA = 0x1057

/** CKA_EC_PARAMS (DER namedCurve OID) of each algorithm, and the coordinate size. */
const CURVES = {
  ES256: { params: '06082a8648ce3d030107', crv: 'P-256', size: 32 },
  ES384: { params: '06052b81040022', crv: 'P-384', size: 48 },
  EdDSA: { params: '06032b6570', crv: 'Ed25519', size: 32 },
} as const
// Ed25519 may also be named by PrintableString "edwards25519" (PKCS#11 3.0 §2.3.5).
const ED25519_NAME = Buffer.concat([Buffer.from([0x13, 12]), Buffer.from('edwards25519')]).toString('hex')

/**
 * `externalKeyId` names the key by its CKA_LABEL, or by its CKA_ID as `id:<hex>`: both survive a
 * restart, unlike object handles.
 */
function keyTemplate(binding: TokenSession['binding'], externalKeyId: string, keyClass: number) {
  const byId = /^id:([0-9a-fA-F]+)$/.exec(externalKeyId)
  return [
    { type: binding.CKA_CLASS, value: keyClass },
    byId
      ? { type: binding.CKA_ID, value: Buffer.from(byId[1] as string, 'hex') }
      : { type: binding.CKA_LABEL, value: externalKeyId },
  ]
}

/** Up to two matches: more than one key of a name is refused rather than guessed at. */
function findOne({ pkcs11, session }: TokenSession, template: ReturnType<typeof keyTemplate>) {
  pkcs11.C_FindObjectsInit(session, template)
  try {
    return pkcs11.C_FindObjects(session, 2)
  } finally {
    pkcs11.C_FindObjectsFinal(session)
  }
}

/** The value of a DER OCTET STRING, or the bytes as they are when they are not one. */
function octetString(bytes: Buffer, rawLength: number): Buffer {
  if (bytes.length === rawLength) return bytes
  if (bytes[0] !== 0x04) return bytes
  const first = bytes[1] as number
  const offset = first < 0x80 ? 2 : 2 + (first & 0x7f)
  return bytes.subarray(offset)
}

function publicJwkOf(alg: SigningAlgorithm, point: Buffer): JWK {
  const { crv, size } = CURVES[alg]
  if (alg === 'EdDSA') return { kty: 'OKP', crv, x: base64url.encode(octetString(point, size)) }
  // An uncompressed point (SEC 1 §2.3.3): 0x04 ‖ x ‖ y.
  const raw = octetString(point, 1 + 2 * size)
  if (raw[0] !== 0x04 || raw.length !== 1 + 2 * size)
    throw new KeyProviderError('unexpected CKA_EC_POINT encoding')
  return {
    kty: 'EC',
    crv,
    x: base64url.encode(raw.subarray(1, 1 + size)),
    y: base64url.encode(raw.subarray(1 + size)),
  }
}

/** A CK_ULONG attribute, in the machine's byte order and width. */
function ulong(value: Buffer): number {
  const little = endianness() === 'LE'
  if (value.length === 8) return Number(little ? value.readBigUInt64LE() : value.readBigUInt64BE())
  return little ? value.readUInt32LE() : value.readUInt32BE()
}

function algorithmOf(keyType: number, params: string, ecType: number): SigningAlgorithm | undefined {
  if (keyType === CKK_EC_EDWARDS)
    return params === CURVES.EdDSA.params || params === ED25519_NAME ? 'EdDSA' : undefined
  if (keyType !== ecType) return undefined
  return params === CURVES.ES256.params ? 'ES256' : params === CURVES.ES384.params ? 'ES384' : undefined
}

function describeOn(token: TokenSession, externalKeyId: string, where: string): ProvidedKey {
  const { binding, pkcs11, session } = token
  const found = findOne(token, keyTemplate(binding, externalKeyId, binding.CKO_PUBLIC_KEY))
  const name = `${where} key '${externalKeyId}'`
  if (found.length === 0) throw new KeyProviderError(`${name}: not found`, { reason: 'not_found' })
  if (found.length > 1) throw new KeyProviderError(`${name}: more than one public key has this name`)
  const [keyType, params, point] = pkcs11
    .C_GetAttributeValue(session, found[0] as Buffer, [
      { type: binding.CKA_KEY_TYPE },
      { type: binding.CKA_EC_PARAMS },
      { type: binding.CKA_EC_POINT },
    ])
    .map((attribute) => attribute.value as Buffer) as [Buffer, Buffer, Buffer]
  const alg = algorithmOf(ulong(keyType), params.toString('hex'), binding.CKK_EC)
  if (!alg) throw new KeyProviderError(`${name} is not a P-256, P-384 or Ed25519 key`)
  return { alg, publicJwk: publicJwkOf(alg, point) }
}

/**
 * Keys on a PKCS#11 token (an HSM, or SoftHSM2 in tests) through pkcs11js, loaded on first use.
 * ES256/ES384 sign the SHA-2 digest with CKM_ECDSA, whose output is already the r‖s of JOSE
 * (PKCS#11 2.40 §2.3.1); EdDSA signs the message with CKM_EDDSA where the token has it. Keys the
 * service generates are token objects, sensitive and not extractable.
 */
export function createPkcs11Provider(options: Pkcs11Options): KeyProvider & { close(): Promise<void> } {
  const token = openToken(options)
  // Private key handles per name: valid for the process as long as the object exists.
  const handles = new Map<string, Buffer>()

  async function privateKey(session: TokenSession, externalKeyId: string): Promise<Buffer> {
    const cached = handles.get(externalKeyId)
    if (cached) return cached
    const found = findOne(
      session,
      keyTemplate(session.binding, externalKeyId, session.binding.CKO_PRIVATE_KEY),
    )
    const name = `${token.where} key '${externalKeyId}'`
    if (found.length === 0) throw new KeyProviderError(`${name}: no private key`, { reason: 'not_found' })
    if (found.length > 1) throw new KeyProviderError(`${name}: more than one private key has this name`)
    handles.set(externalKeyId, found[0] as Buffer)
    return found[0] as Buffer
  }

  async function signOnce(externalKeyId: string, alg: SigningAlgorithm, data: Uint8Array) {
    return token.withSession(async (session) => {
      const key = await privateKey(session, externalKeyId)
      const input =
        alg === 'EdDSA'
          ? Buffer.from(data)
          : createHash(alg === 'ES256' ? 'sha256' : 'sha384')
              .update(data)
              .digest()
      session.pkcs11.C_SignInit(
        session.session,
        { mechanism: alg === 'EdDSA' ? CKM_EDDSA : session.binding.CKM_ECDSA },
        key,
      )
      // On the libuv pool: a slow HSM does not hold the event loop.
      const signature = await session.pkcs11.C_SignAsync(
        session.session,
        input,
        Buffer.alloc(2 * CURVES[alg].size),
      )
      return new Uint8Array(signature)
    })
  }

  const provider = tracedKeyProvider('pkcs11', {
    describe: (externalKeyId) =>
      token.withSession((session) => describeOn(session, externalKeyId, token.where)),

    async sign(externalKeyId, alg, data) {
      try {
        return await signOnce(externalKeyId, alg, data)
      } catch (error) {
        // Sessions the token dropped (a reset, an HSM failover; the pool replaced them), or a key
        // handle from before the key was replaced: once more, on a fresh session and lookup.
        const retry =
          error instanceof KeyProviderError &&
          (error.reason === 'unavailable' || /(OBJECT|KEY)_HANDLE_INVALID/.test(error.message))
        if (!retry) throw error
        handles.delete(externalKeyId)
        return signOnce(externalKeyId, alg, data)
      }
    },

    async generate(externalKeyId, alg) {
      if (alg === 'EdDSA' && !(await token.mechanisms()).includes(CKM_EDDSA)) {
        throw new KeyProviderError(`${token.where} has no EdDSA (CKM_EDDSA)`)
      }
      return token.withSession(async (session) => {
        const { binding, pkcs11 } = session
        if (findOne(session, keyTemplate(binding, externalKeyId, binding.CKO_PRIVATE_KEY)).length > 0) {
          throw new KeyProviderError(`${token.where} already holds a key '${externalKeyId}'`)
        }
        const label = { type: binding.CKA_LABEL, value: externalKeyId }
        // One CKA_ID for both halves, as PKCS#11 tools pair them by it.
        const id = { type: binding.CKA_ID, value: randomBytes(16) }
        await pkcs11.C_GenerateKeyPairAsync(
          session.session,
          { mechanism: alg === 'EdDSA' ? CKM_EC_EDWARDS_KEY_PAIR_GEN : binding.CKM_EC_KEY_PAIR_GEN },
          [
            { type: binding.CKA_TOKEN, value: true },
            { type: binding.CKA_VERIFY, value: true },
            { type: binding.CKA_EC_PARAMS, value: Buffer.from(CURVES[alg].params, 'hex') },
            label,
            id,
          ],
          [
            { type: binding.CKA_TOKEN, value: true },
            { type: binding.CKA_PRIVATE, value: true },
            { type: binding.CKA_SIGN, value: true },
            { type: binding.CKA_SENSITIVE, value: true },
            { type: binding.CKA_EXTRACTABLE, value: false },
            label,
            id,
          ],
        )
        return describeOn(session, externalKeyId, token.where)
      })
    },

    async check() {
      await token.withSession(() => undefined)
    },
  })
  return { ...provider, close: () => token.close() }
}
