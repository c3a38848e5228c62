import { createHash, X509Certificate } from 'node:crypto'
import { Openid4vpClient } from '@openid4vc/openid4vp'
import { CompactEncrypt, compactVerify, importJWK, type JWK } from 'jose'

/** How the wallet checks a signed request object: by default the `x5c` leaf's signature. */
export type VerifyRequestJwt = ConstructorParameters<typeof Openid4vpClient>[0]['callbacks']['verifyJwt']

const verifyWithX5c: VerifyRequestJwt = async (signer, { compact }) => {
  const x5c = (signer as { x5c?: string[] }).x5c
  if (!x5c?.[0]) return { verified: false }
  const certificate = new X509Certificate(Buffer.from(x5c[0], 'base64'))
  await compactVerify(compact, certificate.publicKey)
  return { verified: true, signerJwk: certificate.publicKey.export({ format: 'jwk' }) as never }
}

/**
 * oid4vc-ts (@openid4vc/openid4vp) as the wallet: it resolves and checks our request (the client
 * id prefix rules of OpenID4VP 1.0 §5.9.3 are its own), then answers it.
 */
export function walletClient(verifyJwt: VerifyRequestJwt = verifyWithX5c) {
  return new Openid4vpClient({
    callbacks: {
      hash: (data, alg) => new Uint8Array(createHash(alg.replace('-', '')).update(data).digest()),
      verifyJwt,
      getX509CertificateMetadata: (certificate) => {
        const san = new X509Certificate(Buffer.from(certificate, 'base64')).subjectAltName ?? ''
        return {
          sanDnsNames: san
            .split(', ')
            .filter((e) => e.startsWith('DNS:'))
            .map((e) => e.slice(4)),
          sanUriNames: san
            .split(', ')
            .filter((e) => e.startsWith('URI:'))
            .map((e) => e.slice(4)),
        }
      },
      encryptJwe: async (encryptor, data) => {
        const jwk = encryptor.publicJwk as JWK
        const jwe = await new CompactEncrypt(new TextEncoder().encode(data))
          .setProtectedHeader({
            alg: encryptor.alg,
            enc: encryptor.enc,
            ...(jwk.kid ? { kid: jwk.kid } : {}),
          })
          .encrypt(await importJWK(jwk, encryptor.alg))
        return { jwe, encryptionJwk: jwk as never }
      },
      signJwt: () => {
        throw new Error('the wallet signs nothing here')
      },
      decryptJwe: () => {
        throw new Error('not used')
      },
    },
  })
}

/** The wallet's JARM settings for an encrypted answer (`direct_post.jwt`, `dc_api.jwt`): ECDH-ES to the request's key. */
const encryptedFor = (request: Record<string, unknown>) => ({
  jarm: {
    encryption: { nonce: request.nonce as string },
    serverMetadata: {
      authorization_encryption_alg_values_supported: ['ECDH-ES'],
      authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'],
    } as never,
  },
})

/**
 * The wallet's whole turn: resolve the authorization request URI (by value or by reference), answer
 * with the `vp_token` the callback makes from the resolved request (encrypted for
 * `direct_post.jwt`), post it to the response URI.
 */
export async function resolveAndAnswer(
  authorizationRequestUri: string,
  vpToken: (request: Record<string, unknown>) => Promise<Record<string, string[]>>,
  verifyJwt?: VerifyRequestJwt,
) {
  const wallet = walletClient(verifyJwt)
  const parsed = wallet.parseOpenid4vpAuthorizationRequest({
    authorizationRequest: authorizationRequestUri,
  })
  const resolved = await wallet.resolveOpenId4vpAuthorizationRequest({
    authorizationRequestPayload: parsed.params as never,
  })
  const request = resolved.authorizationRequestPayload as Record<string, unknown>
  const encrypted = request.response_mode === 'direct_post.jwt'
  const response = await wallet.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: resolved.authorizationRequestPayload as never,
    authorizationResponsePayload: { vp_token: await vpToken(request) } as never,
    ...(encrypted ? encryptedFor(request) : {}),
  })
  const submitted = await wallet.submitOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: resolved.authorizationRequestPayload as never,
    authorizationResponsePayload: response.authorizationResponsePayload,
    ...(response.jarm ? { jarm: { responseJwt: response.jarm.responseJwt } } : {}),
  })
  return {
    resolved,
    request,
    responseMode: submitted.responseMode,
    status: submitted.response.status,
    body: await submitted.response.text(),
  }
}

/** One entry of a dc-api request's `requests`, and what the browser hands back (a DigitalCredential's fields). */
export interface DcApiEntry {
  protocol: string
  data: Record<string, unknown>
}

/**
 * The wallet's turn over the Digital Credentials API (OpenID4VP 1.0 Appendix A), as the browser
 * would run it: the library resolves the request with the page's `origin` (checking
 * `expected_origins` of a signed one unless `disableOriginValidation`, as a relaying phisher's wallet
 * would not), the callback makes the `vp_token` for the resolved request and the effective client
 * id (`origin:<origin>` when unsigned), and the answer is encrypted for `dc_api.jwt`.
 */
export async function answerOverDcApi(
  entry: DcApiEntry,
  origin: string,
  vpToken: (request: Record<string, unknown>, effectiveClientId: string) => Promise<Record<string, string[]>>,
  options: { disableOriginValidation?: boolean } = {},
): Promise<DcApiEntry> {
  const wallet = walletClient()
  const resolved = await wallet.resolveOpenId4vpAuthorizationRequest({
    authorizationRequestPayload: entry.data as never,
    origin,
    ...options,
  })
  const request = resolved.authorizationRequestPayload as Record<string, unknown>
  const encrypted = request.response_mode === 'dc_api.jwt'
  const response = await wallet.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: resolved.authorizationRequestPayload,
    origin,
    authorizationResponsePayload: { vp_token: await vpToken(request, resolved.client.effective) } as never,
    ...(encrypted ? encryptedFor(request) : {}),
  })
  return {
    protocol: entry.protocol,
    data: response.jarm
      ? { response: response.jarm.responseJwt }
      : (response.authorizationResponsePayload as Record<string, unknown>),
  }
}
