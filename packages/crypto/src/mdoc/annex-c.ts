import { createHash } from 'node:crypto'
import { annexCUnfit, type DcqlQuery } from '@credential-service/core-domain'
import { base64url, type JWK } from 'jose'
import { checkCbor } from '../cbor-guard'
import { PresentationRejected } from '../presentation'
import type { Signer } from '../signer'
import { loadCbor } from './cbor'
import { loadMdoc } from './context'
import { signCoseSign1 } from './cose-sign1'
import { jwkToCoseKey } from './issue'

/** One DCQL credential query (OpenID4VP 1.0 §6.1). */
type CredentialQuery = DcqlQuery['credentials'][number]

export interface AnnexCRequestOptions {
  /** An `mso_mdoc` query, each claim's path [namespace, element] (OpenID4VP B.2.4). */
  credential: CredentialQuery
  /** The verifier's fresh nonce, at least 16 bytes. */
  nonce: Uint8Array
  /** The public P-256 key the wallet encrypts its response to. */
  recipientJwk: JWK
  /**
   * Reader authentication (ISO 18013-5 §9.1.4): the DocRequest gets a `readerAuth` signed by this
   * key chain over the SessionTranscript of `origin`, so the wallet can show who asks.
   */
  readerAuth?: { signer: Signer; origin: string } | undefined
}

/** The request `data` of the `org-iso-mdoc` protocol (ISO/IEC 18013-7 Annex C). */
export interface AnnexCRequest {
  /** base64url CBOR DeviceRequest. */
  deviceRequest: string
  /** base64url CBOR EncryptionInfo, kept: the SessionTranscript hashes it as sent. */
  encryptionInfo: string
}

export interface OpenAnnexCResponseOptions {
  /** The wallet's `data.response`: base64url CBOR EncryptedResponse. */
  response: string
  /** The EncryptionInfo exactly as sent in the request. */
  encryptionInfo: string
  /** The web origin the browser reported for the request, e.g. `https://rp.example`. */
  origin: string
  recipientPrivateJwk: JWK
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

const isP256 = (jwk: JWK) => jwk.kty === 'EC' && jwk.crv === 'P-256' && !!jwk.x && !!jwk.y

/** The ItemsRequest of a DCQL `mso_mdoc` query; one it cannot express is refused (annexCUnfit). */
function itemsOf(credential: CredentialQuery) {
  const unfit = annexCUnfit(credential)
  if (unfit || !('doctype_value' in credential.meta))
    throw new Error(`credential query '${credential.id}': ${unfit}`)
  const namespaces: Record<string, Record<string, boolean>> = {}
  for (const claim of credential.claims ?? []) {
    const [namespace, element] = claim.path as [string, string]
    const elements = namespaces[namespace] ?? {}
    elements[element] = elements[element] === true || claim.intent_to_retain === true
    namespaces[namespace] = elements
  }
  return { docType: credential.meta.doctype_value, namespaces }
}

/**
 * The `org-iso-mdoc` request data (ISO/IEC 18013-7 C.2): a DeviceRequest (version 1.0, one
 * DocRequest, with `readerAuth` when asked) and the EncryptionInfo ["dcapi", {nonce, recipientPublicKey}].
 */
export async function annexCRequest(options: AnnexCRequestOptions): Promise<AnnexCRequest> {
  if (options.nonce.length < 16) throw new Error('the Annex C nonce must hold at least 16 bytes')
  if (!isP256(options.recipientJwk) || options.recipientJwk.d !== undefined)
    throw new Error('the Annex C recipient key must be a public P-256 JWK')
  const { mdoc } = await loadMdoc()
  const itemsRequest = mdoc.ItemsRequest.create(itemsOf(options.credential))
  const encryptionInfo = base64url.encode(
    mdoc.cborEncode([
      'dcapi',
      new Map<string, unknown>([
        ['nonce', new Uint8Array(options.nonce)],
        ['recipientPublicKey', jwkToCoseKey(options.recipientJwk)],
      ]),
    ]),
  )
  const readerAuth = options.readerAuth
    ? mdoc.ReaderAuth.fromEncodedStructure(
        await signReaderAuth(options.readerAuth, itemsRequest.encode(), encryptionInfo),
      )
    : undefined
  const deviceRequest = mdoc.DeviceRequest.create({
    version: '1.0',
    docRequests: [mdoc.DocRequest.create({ itemsRequest, ...(readerAuth ? { readerAuth } : {}) })],
  })
  return { deviceRequest: base64url.encode(deviceRequest.encode()), encryptionInfo }
}

/**
 * readerAuth (ISO 18013-5 §9.1.4): a COSE_Sign1 with a detached payload, ReaderAuthenticationBytes
 * = #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes]), where
 * ItemsRequestBytes = #6.24(bstr .cbor ItemsRequest) are the bytes the DocRequest carries.
 */
async function signReaderAuth(
  reader: { signer: Signer; origin: string },
  itemsRequest: Uint8Array,
  encryptionInfo: string,
) {
  if (!reader.signer.x5c.length)
    throw new Error('reader authentication needs a key chain with a certificate (x5chain)')
  const { cbor, Tag } = await loadCbor()
  const sessionTranscript = await annexCSessionTranscript(encryptionInfo, reader.origin)
  // The SessionTranscript's own bytes, not a re-encoding: the wallet hashes what it builds the same way.
  const readerAuthentication = Buffer.concat([
    Uint8Array.of(0x83),
    cbor.encode('ReaderAuthentication'),
    sessionTranscript,
    cbor.encode(new Tag(itemsRequest, 24)),
  ])
  return signCoseSign1(reader.signer, cbor.encode(new Tag(readerAuthentication, 24)), { detached: true })
}

/**
 * The SessionTranscript's CBOR bytes (ISO/IEC 18013-7 C.3): [null, null, ["dcapi", SHA-256(CBOR(
 * [encryptionInfo, origin]))]], with the EncryptionInfo as the base64url string sent. Both HPKE
 * `info` and the device signature bind to it, so a response made for another origin fails.
 */
export async function annexCSessionTranscript(encryptionInfo: string, origin: string): Promise<Uint8Array> {
  const { mdoc } = await loadMdoc()
  const dcapiInfoHash = createHash('sha256')
    .update(mdoc.cborEncode([encryptionInfo, origin]))
    .digest()
  return mdoc.cborEncode([null, null, ['dcapi', new Uint8Array(dcapiInfoHash)]])
}

/** `enc` and `cipherText` of an EncryptedResponse ["dcapi", {enc, cipherText}] (ISO/IEC 18013-7 C.4). */
async function encryptedResponse(response: string) {
  if (!BASE64URL.test(response)) throw new PresentationRejected('the Annex C response is not base64url')
  const bytes = Buffer.from(response, 'base64url')
  // Wallet bytes: the guard runs before any decoder (S-128).
  const checked = checkCbor(bytes)
  if (!checked.ok)
    throw new PresentationRejected(`the Annex C response is refused before decoding: ${checked.reason}`)
  const { mdoc } = await loadMdoc()
  let decoded: unknown
  try {
    // Not unwrapped: a tag-24 wrapped EncryptedResponse is not one.
    decoded = mdoc.cborDecode(bytes, { unwrapTopLevelDataItem: false })
  } catch {
    throw new PresentationRejected('the Annex C response is not CBOR')
  }
  const body =
    Array.isArray(decoded) && decoded.length === 2 && decoded[0] === 'dcapi' ? decoded[1] : undefined
  const enc = body instanceof Map ? body.get('enc') : undefined
  const cipherText = body instanceof Map ? body.get('cipherText') : undefined
  if (!(enc instanceof Uint8Array) || !(cipherText instanceof Uint8Array))
    throw new PresentationRejected(
      'the Annex C response is not an EncryptedResponse ["dcapi", {enc, cipherText}]',
    )
  return { enc, cipherText }
}

/**
 * Decrypts an `org-iso-mdoc` response (ISO/IEC 18013-7 C.4): HPKE base mode (RFC 9180),
 * DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, `info` the SessionTranscript, no aad.
 * Returns the DeviceResponse bytes, still to verify with that SessionTranscript.
 */
export async function openAnnexCResponse(
  options: OpenAnnexCResponseOptions,
): Promise<{ deviceResponse: Uint8Array; sessionTranscript: Uint8Array }> {
  const { recipientPrivateJwk: key } = options
  if (!isP256(key) || typeof key.d !== 'string')
    throw new Error('the Annex C recipient key must be a private P-256 JWK')
  const { enc, cipherText } = await encryptedResponse(options.response)
  const sessionTranscript = await annexCSessionTranscript(options.encryptionInfo, options.origin)
  const { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } = await import('@hpke/core')
  const suite = new CipherSuite({
    kem: new DhkemP256HkdfSha256(),
    kdf: new HkdfSha256(),
    aead: new Aes128Gcm(),
  })
  // Only the key members: WebCrypto refuses a JWK whose `alg` or `use` names signing.
  const recipientKey = await suite.kem.importKey(
    'jwk',
    { kty: 'EC', crv: 'P-256', x: key.x, y: key.y, d: key.d },
    false,
  )
  let plaintext: ArrayBuffer
  try {
    plaintext = await suite.open({ recipientKey, enc, info: sessionTranscript }, cipherText)
  } catch {
    throw new PresentationRejected(
      'the Annex C response does not decrypt: tampered, encrypted to another key, or for another origin or request',
    )
  }
  return { deviceResponse: new Uint8Array(plaintext), sessionTranscript }
}
