import { createHash, randomBytes } from 'node:crypto'
import { Decoder, type Tag } from 'cbor-x'
import {
  CompactEncrypt,
  decodeJwt,
  exportJWK,
  type generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from 'jose'
import { expect } from 'vitest'
import { holderProof } from './wallet'

/**
 * What the hand-built Interactive Authorization wallets of both wire forms share (issue 37): form
 * posts with DPoP, PKCE, the OpenID4VP response (encrypted when the request asks), the code's
 * redemption and reading the issued credential. Nothing here is specific to either form.
 */
export const NS = 'org.iso.18013.5.1'
const cbor = new Decoder({ useRecords: false, mapsAsObjects: false })
// biome-ignore lint/suspicious/noExplicitAny: protocol answers are read loosely in tests
export type Loose = Record<string, any>
export type Keys = Awaited<ReturnType<typeof generateKeyPair>>

export const dpopProof = async (keys: Keys, url: string, extra: Record<string, unknown> = {}) =>
  new SignJWT({ htm: 'POST', htu: url, jti: randomBytes(12).toString('base64url'), ...extra })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keys.publicKey) })
    .setIssuedAt()
    .sign(keys.privateKey)

/** A form POST, with a DPoP proof of `dpop` (retried once with the server's DPoP-Nonce when asked). */
export const postForm = async (
  url: string,
  form: Record<string, string>,
  dpop?: Keys,
  headers: Record<string, string> = {},
  httpHeaders: Record<string, string> = {},
) => {
  let nonce: string | undefined
  for (;;) {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        ...httpHeaders,
        'content-type': 'application/x-www-form-urlencoded',
        ...(dpop ? { dpop: await dpopProof(dpop, url, nonce ? { nonce, ...headers } : headers) } : {}),
      },
      body: new URLSearchParams(form),
    })
    const body = (await response.json()) as Loose
    const next = response.headers.get('dpop-nonce')
    if (dpop && body.error === 'use_dpop_nonce' && next && !nonce) {
      nonce = next
      continue
    }
    return { status: response.status, body, headers: response.headers }
  }
}

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** The OpenID4VP response object: `{vp_token}`, or `{response: JWE}` for a `.jwt` response mode (OpenID4VP 1.0 §8.3). */
export const openid4vpResponse = async (request: Loose, vpToken: Record<string, string[]>) => {
  const response = { vp_token: vpToken }
  if (!String(request.response_mode).endsWith('.jwt')) return response
  const jwk = request.client_metadata.jwks.keys[0] as JWK
  const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(response)))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: jwk.kid as string })
    .encrypt(await importJWK(jwk, 'ECDH-ES'))
  return { response: jwe }
}

/** The disclosed claims of an SD-JWT VC (its disclosures [salt, name, value]). */
export const disclosedOf = (sdJwt: string) =>
  Object.fromEntries(
    sdJwt
      .split('~')
      .slice(1)
      .filter(Boolean)
      .map((d) => JSON.parse(Buffer.from(d, 'base64url').toString()).slice(1) as [string, unknown]),
  )

/** The elements of an mdoc IssuerSigned (base64url CBOR) in namespace `NS`. */
export const elementsOf = (issuerSigned: string) => {
  const decoded = cbor.decode(Buffer.from(issuerSigned, 'base64url')) as Map<string, unknown>
  const items = (decoded.get('nameSpaces') as Map<string, Tag[]>).get(NS) ?? []
  return Object.fromEntries(
    items.map((item) => {
      // IssuerSignedItemBytes: tag 24 around the item's CBOR. Once @owf/mdoc is loaded in this
      // process (the server verifies an mdoc), cbor-x's global tag 24 gives its DataItem (`buffer`).
      const tagged = item as unknown as { value?: Uint8Array; buffer?: Uint8Array }
      const element = cbor.decode((tagged.value ?? tagged.buffer) as Uint8Array) as Map<string, unknown>
      return [element.get('elementIdentifier'), element.get('elementValue')]
    }),
  )
}

/** The code at /token (no redirect_uri: the Initial Request had none), then the credential (the mDL's elements by default). */
export const redeem = async (
  issuer: string,
  code: string,
  verifier: string,
  configuration = 'mdl',
  read: (credential: string) => Record<string, unknown> = elementsOf,
) => {
  const token = await postForm(`${issuer}/token`, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: 'wallet-1',
  })
  expect(token.status, JSON.stringify(token.body)).toBe(200)
  const { c_nonce } = (await (await fetch(`${issuer}/nonce`, { method: 'POST' })).json()) as Loose
  const { proof } = await holderProof(issuer, c_nonce)
  const identifier = token.body.authorization_details?.[0]?.credential_identifiers?.[0]
  const credential = await fetch(`${issuer}/credential`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token.body.access_token}` },
    body: JSON.stringify({
      ...(identifier
        ? { credential_identifier: identifier }
        : { credential_configuration_id: configuration }),
      proofs: { jwt: [proof] },
    }),
  })
  const issued = (await credential.json()) as Loose
  expect(credential.status, JSON.stringify(issued)).toBe(200)
  return read(issued.credentials[0].credential)
}

/**
 * The Initial Request's form of either Interactive Authorization form: the PAR parameters (a PKCE
 * challenge, authorization_details for one configuration) and interaction_types_supported.
 */
export const initialRequestParams = (
  challenge: string,
  options: { types: string[]; configuration?: string; redirectUri?: string },
) => ({
  response_type: 'code',
  client_id: 'wallet-1',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  authorization_details: JSON.stringify([
    { type: 'openid_credential', credential_configuration_id: options.configuration ?? 'mdl' },
  ]),
  interaction_types_supported: options.types.join(','),
  ...(options.redirectUri ? { redirect_uri: options.redirectUri } : {}),
})

/** The OpenID4VP request of an answer: a signed request object's claims, or the unsigned parameters. */
export const requestOf = (body: Loose): Loose =>
  body.openid4vp_request.request ? decodeJwt(body.openid4vp_request.request) : body.openid4vp_request
