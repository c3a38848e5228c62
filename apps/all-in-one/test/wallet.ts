import { createHash } from 'node:crypto'
import {
  type CredentialRequest,
  type PreAuthorizedCodeRequest,
  zNonceResponse,
  zRequestObject,
} from '@credential-service/core-domain'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { Encoder, Tag } from 'cbor-x'
import {
  base64url,
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  type JWK,
  SignJWT,
} from 'jose'

/**
 * The `kbSigner` of @sd-jwt/sd-jwt-vc for a holder key: signs the KB-JWT signing input with jose
 * and returns the signature part, as the library expects.
 */
export function kbSigner(privateKey: Parameters<SignJWT['sign']>[0]) {
  return async (data: string): Promise<string> => {
    const [header, payload] = data.split('.')
    const jwt = await new SignJWT(JSON.parse(Buffer.from(payload as string, 'base64url').toString()))
      .setProtectedHeader(JSON.parse(Buffer.from(header as string, 'base64url').toString()))
      .sign(privateKey)
    return jwt.split('.')[2] as string
  }
}

type HolderKeys = Awaited<ReturnType<typeof generateKeyPair>>

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`)
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
  return (await response.json()) as any
}

/**
 * A credential for a fresh (or given) holder key over real HTTP: offer by value through `/api`,
 * then token, nonce and credential at the offer's credential issuer (OpenID4VCI pre-authorized flow).
 */
/** An OpenID4VCI 1.0 §8.2.1.1 `jwt` proof for `issuer` and `nonce`, by a fresh holder key. */
export async function holderProof(issuer: string, nonce: string) {
  const holder = await generateKeyPair('ES256')
  const proof = await new SignJWT({ nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(holder.publicKey) })
    .setAudience(issuer)
    .setIssuedAt()
    .sign(holder.privateKey)
  return { proof, holder }
}

export async function issueOverHttp(options: {
  apiBase: string
  auth: Record<string, string>
  configurationId: string
  claims: Record<string, unknown>
  holder?: HolderKeys
  /** Fetch the offer from its `credential_offer_uri` (OpenID4VCI §4.1.3) instead of by value. */
  byReference?: boolean
  /** More fields of the offer (`statusHandle`, …). */
  offer?: Record<string, unknown>
  /** Proofs sent, one holder key each: a batch (OpenID4VCI §8.2); 1 by default. */
  batch?: number
}): Promise<{ credential: string; credentials: string[]; holder: HolderKeys; sessionId: string }> {
  const offer = await postJson(
    `${options.apiBase}/api/offers`,
    {
      credentialConfigurationIds: [options.configurationId],
      claims: { [options.configurationId]: options.claims },
      byReference: options.byReference ?? false,
      ...options.offer,
    },
    options.auth,
  )
  const credentialOffer = options.byReference
    ? await (await fetch(offer.credentialOfferUri as string)).json()
    : offer.credentialOffer
  const redeemed = await redeemOffer({
    credentialOffer,
    configurationId: options.configurationId,
    ...(options.holder ? { holder: options.holder } : {}),
    ...(options.batch ? { batch: options.batch } : {}),
  })
  return { ...redeemed, sessionId: offer.sessionId as string }
}

/** The wallet's side of a pre-authorized code offer: token, nonce, proof, credential (OpenID4VCI §6–§8). */
export async function redeemOffer(options: {
  credentialOffer: Record<string, unknown>
  configurationId: string
  holder?: HolderKeys
  /** Proofs sent: the first with `holder`, the others with fresh keys (a batch). */
  batch?: number
  /** Headers sent with every request (a tracing wallet's `traceparent`). */
  headers?: Record<string, string>
}): Promise<{
  credential: string
  credentials: string[]
  holder: HolderKeys
  accessToken: string
  notificationId: string | undefined
}> {
  const headers = options.headers ?? {}
  // biome-ignore lint/suspicious/noExplicitAny: the offer object is read loosely
  const credentialOffer = options.credentialOffer as any
  const issuer = credentialOffer.credential_issuer as string
  const code =
    credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code']
  const tokenRequest: PreAuthorizedCodeRequest = {
    grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
    'pre-authorized_code': code,
  }
  const tokenResponse = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(tokenRequest as Record<string, string>),
  })
  if (!tokenResponse.ok)
    throw new Error(`${issuer}/token: ${tokenResponse.status} ${await tokenResponse.text()}`)
  const { access_token } = (await tokenResponse.json()) as { access_token: string }
  // The answers the wallet reads are checked against their schemas (core-domain/protocol) too.
  const { c_nonce } = zNonceResponse.parse(await postJson(`${issuer}/nonce`, {}, headers))
  const holder = options.holder ?? (await generateKeyPair('ES256', { extractable: true }))
  const keys = [holder]
  while (keys.length < (options.batch ?? 1)) keys.push(await generateKeyPair('ES256'))
  const proofs = await Promise.all(
    keys.map(async (key) =>
      new SignJWT({ nonce: c_nonce })
        .setProtectedHeader({
          alg: 'ES256',
          typ: 'openid4vci-proof+jwt',
          jwk: await exportJWK(key.publicKey),
        })
        .setAudience(issuer)
        .setIssuedAt()
        .sign(key.privateKey),
    ),
  )
  const credentialRequest: CredentialRequest = {
    credential_configuration_id: options.configurationId,
    proofs: { jwt: proofs },
  }
  const issued = await postJson(`${issuer}/credential`, credentialRequest, {
    authorization: `Bearer ${access_token}`,
    ...headers,
  })
  const credentials = (issued.credentials as { credential: string }[]).map((c) => c.credential)
  return {
    credential: credentials[0] as string,
    credentials,
    holder,
    accessToken: access_token,
    notificationId: issued.notification_id,
  }
}

/**
 * The wallet's side of an OpenID4VP request by reference with `direct_post` (§5.10, §8.2): fetch the
 * request object, present the SD-JWT VC with a KB-JWT over the request's nonce and client id, post
 * the answer to `response_uri`.
 */
export async function presentOverHttp(options: {
  requestUri: string
  credentialQueryId: string
  credential: string
  holder: HolderKeys
  disclose: Record<string, boolean>
}): Promise<Response> {
  const requestObject = await (await fetch(options.requestUri)).text()
  const claims = zRequestObject.parse(decodeJwt(requestObject))
  const vp = await presentSdJwt({ ...options, nonce: claims.nonce, aud: claims.client_id })
  return fetch(claims.response_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      vp_token: JSON.stringify({ [options.credentialQueryId]: [vp] }),
      state: claims.state ?? '',
    }),
  })
}

/** The holder's SD-JWT VC presentation of `disclose`, with a KB-JWT over `nonce` for `aud` (SD-JWT VC §4.3). */
export async function presentSdJwt(options: {
  credential: string
  holder: HolderKeys
  disclose: Record<string, boolean>
  nonce: string
  aud: string
}): Promise<string> {
  const holderSdJwt = new SDJwtVcInstance({
    hasher: digest,
    saltGenerator: generateSalt,
    kbSigner: kbSigner(options.holder.privateKey),
    kbSignAlg: 'ES256',
  })
  return holderSdJwt.present(options.credential, options.disclose, {
    kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce: options.nonce, aud: options.aud } },
  })
}

/**
 * The holder's VP JWT of a jwt_vc_json credential (OpenID4VP 1.0 B.1.3), built from the spec text:
 * a VCDM 2.0 presentation secured as `vp+jwt` (VC-JOSE-COSE §3.2.2) enveloping the VC-JWT as
 * `data:application/vc+jwt,…`, with `nonce` and `aud` as B.1.3 asks, signed by the bound key.
 */
export function presentVcJwt(options: {
  credential: string
  holder: HolderKeys
  nonce: string
  aud: string
}) {
  return new SignJWT({
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    type: ['VerifiablePresentation'],
    verifiableCredential: [
      {
        '@context': ['https://www.w3.org/ns/credentials/v2'],
        type: ['EnvelopedVerifiableCredential'],
        id: `data:application/vc+jwt,${options.credential}`,
      },
    ],
    nonce: options.nonce,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'vp+jwt' })
    .setAudience(options.aud)
    .setIssuedAt()
    .sign(options.holder.privateKey)
}

// CBOR as ISO 18013-5 uses it (the issuer's settings): plain byte strings, maps kept as maps.
const cbor = new Encoder({
  useRecords: false,
  tagUint8Array: false,
  mapsAsObjects: false,
  variableMapSize: true,
})

/**
 * The wallet's DeviceResponse (ISO 18013-5 §8.3.2.1.2.2) for an issued mdoc, with the device
 * signature over the OpenID4VP SessionTranscript (OpenID4VP B.2.6.1), built here with cbor-x.
 */
export async function mdocDeviceResponse(options: {
  credential: string
  holder: HolderKeys
  docType: string
  clientId: string
  nonce: string
  responseUri: string
  encryptionJwk?: JWK
}): Promise<string> {
  const thumbprint = options.encryptionJwk
    ? base64url.decode(await calculateJwkThumbprint(options.encryptionJwk))
    : null
  const handover = createHash('sha256')
    .update(cbor.encode([options.clientId, options.nonce, thumbprint, options.responseUri]))
    .digest()
  return base64url.encode(
    await signedDeviceResponse({
      ...options,
      sessionTranscript: [null, null, ['OpenID4VPHandover', handover]],
    }),
  )
}

/** The DeviceResponse (CBOR) of one document, device-signed over the given SessionTranscript. */
export async function signedDeviceResponse(options: {
  credential: string
  holder: HolderKeys
  docType: string
  sessionTranscript: unknown[]
}): Promise<Uint8Array> {
  const { sessionTranscript } = options
  const deviceNameSpaces = new Tag(cbor.encode(new Map()), 24)
  const payload = cbor.encode(
    new Tag(cbor.encode(['DeviceAuthentication', sessionTranscript, options.docType, deviceNameSpaces]), 24),
  )
  const protectedHeader = cbor.encode(new Map([[1, -7]]))
  const toBeSigned = cbor.encode(['Signature1', protectedHeader, new Uint8Array(0), payload])
  const signature = new Uint8Array(
    await crypto.subtle.sign(
      { name: 'ECDSA', hash: 'SHA-256' },
      options.holder.privateKey as Parameters<typeof crypto.subtle.sign>[1],
      toBeSigned,
    ),
  )
  const document = {
    docType: options.docType,
    issuerSigned: cbor.decode(base64url.decode(options.credential)),
    deviceSigned: {
      nameSpaces: deviceNameSpaces,
      deviceAuth: { deviceSignature: [protectedHeader, new Map(), null, signature] },
    },
  }
  return cbor.encode({ version: '1.0', documents: [document], status: 0 })
}
