import { createHash, X509Certificate } from 'node:crypto'
import { CompactEncrypt, compactVerify, decodeJwt, importJWK, type JWK, SignJWT } from 'jose'

/*
 * A holder written from the specification text alone (OpenID4VP 1.0 Appendix A, RFC 9901 SD-JWT,
 * SD-JWT VC), with jose and node:crypto: no OpenID4VP or SD-JWT library, so it cannot share
 * a library's reading of the text with the verifier.
 */

/**
 * A.3.2: the wallet reads a signed request (`{ request: <JWS> }`), checks its signature with the
 * `x5c` leaf, and refuses it unless the page's origin is one of `expected_origins`.
 */
export async function readSignedRequest(data: Record<string, unknown>, origin: string) {
  const jws = String(data.request)
  const header = JSON.parse(Buffer.from(jws.split('.')[0] as string, 'base64url').toString()) as {
    x5c?: string[]
  }
  const leaf = new X509Certificate(Buffer.from(header.x5c?.[0] ?? '', 'base64'))
  await compactVerify(jws, leaf.publicKey)
  const request = decodeJwt(jws) as Record<string, unknown>
  if (!(request.expected_origins as string[] | undefined)?.includes(origin))
    throw new Error(`${origin} is not in expected_origins`)
  return request
}

/**
 * RFC 9901 §4.3, §4.3.1: the issued SD-JWT with only the disclosures of `keep` (by claim name),
 * then a KB-JWT (`typ` kb+jwt) over it: `iat`, `aud`, `nonce`, and `sd_hash`, the base64url
 * SHA-256 of the presented SD-JWT up to and including its last `~`.
 */
export async function presentByHand(options: {
  credential: string
  holderKey: Parameters<SignJWT['sign']>[0]
  keep: string[]
  nonce: string
  aud: string
}) {
  const [issuerJwt, ...disclosures] = options.credential.split('~').filter(Boolean)
  const kept = disclosures.filter((disclosure) => {
    const decoded = JSON.parse(Buffer.from(disclosure, 'base64url').toString()) as unknown[]
    return decoded.length === 3 && options.keep.includes(decoded[1] as string)
  })
  const presented = `${[issuerJwt, ...kept].join('~')}~`
  const kbJwt = await new SignJWT({
    iat: Math.floor(Date.now() / 1000),
    aud: options.aud,
    nonce: options.nonce,
    sd_hash: createHash('sha256').update(presented).digest('base64url'),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(options.holderKey)
  return `${presented}${kbJwt}`
}

/**
 * A.2, §8.3: the DigitalCredential's `data` for `response_mode` `dc_api` (the response parameters
 * as they are) or `dc_api.jwt` (`{ response: <JWE> }`, ECDH-ES to the request's `client_metadata`
 * key, with an `enc` it lists).
 */
export async function dcApiResponseData(request: Record<string, unknown>, vpToken: Record<string, string[]>) {
  if (request.response_mode !== 'dc_api.jwt') return { vp_token: vpToken }
  const metadata = request.client_metadata as {
    jwks: { keys: JWK[] }
    encrypted_response_enc_values_supported?: string[]
  }
  const key = metadata.jwks.keys[0] as JWK
  const enc = metadata.encrypted_response_enc_values_supported?.[0] ?? 'A128GCM'
  const response = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ vp_token: vpToken })))
    .setProtectedHeader({ alg: 'ECDH-ES', enc, ...(key.kid ? { kid: key.kid } : {}) })
    .encrypt(await importJWK(key, 'ECDH-ES'))
  return { response }
}

/**
 * The holder's whole answer to a signed DC API request at `origin`: the request read (A.3.2), the
 * credential presented with `given_name` disclosed and the KB-JWT `aud` `aud(request)` makes.
 */
export async function answerSignedByHand(options: {
  data: Record<string, unknown>
  origin: string
  credential: string
  holderKey: Parameters<SignJWT['sign']>[0]
  aud: (request: Record<string, unknown>) => string
}) {
  const request = await readSignedRequest(options.data, options.origin)
  const presentation = await presentByHand({
    credential: options.credential,
    holderKey: options.holderKey,
    keep: ['given_name'],
    nonce: String(request.nonce),
    aud: options.aud(request),
  })
  const data = await dcApiResponseData(request, { pid: [presentation] })
  return { request, answer: { protocol: 'openid4vp-v1-signed', data } }
}
