import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { bearer } from './harness'
import { kbSigner } from './wallet'

export const VCT = 'urn:eudi:pid:1'

type Headers = Record<string, string>
// biome-ignore lint/suspicious/noExplicitAny: protocol answers are read loosely in tests
type Loose = Record<string, any>

/** An SD-JWT VC `pid` (given_name, age_over_18, both disclosable) signed with key chain `keys`. */
export const PID_CREDENTIAL = {
  id: 'pid',
  config: { format: 'dc+sd-jwt', vct: VCT },
  keyChainId: 'keys',
  fields: [
    { path: ['given_name'], type: 'string', disclosable: true },
    { path: ['age_over_18'], type: 'boolean', disclosable: true },
  ],
}

/** `ask`: the `pid` back over direct_post, its age_over_18 true. */
export const ASK_PRESENTATION = {
  id: 'ask',
  keyChainId: 'keys',
  responseMode: 'direct_post',
  dcqlQuery: {
    credentials: [
      {
        id: 'pid',
        format: 'dc+sd-jwt',
        meta: { vct_values: [VCT] },
        claims: [{ path: ['age_over_18'], values: [true] }],
      },
    ],
  },
}

/**
 * A tenant that issues an SD-JWT VC `pid` and asks for it back (`ask`, direct_post), with a client
 * holding `roles` (all issuance and presentation roles by default).
 */
export async function setUpTenant(
  app: FastifyInstance,
  root: Headers,
  tenantId: string,
  roles = ['key:manage', 'issuance:config', 'issuance:offer', 'presentation:config', 'presentation:request'],
) {
  const post = async (url: string, payload: object, headers: Headers) => {
    const response = await app.inject({ method: 'POST', url, headers, payload })
    if (response.statusCode !== 201) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  await post('/api/tenants', { id: tenantId, name: tenantId }, root)
  const client = await post(`/api/tenants/${tenantId}/clients`, { roles }, root)
  const auth = await bearer(app, client.clientId, client.clientSecret)
  await post(
    '/api/key-chains',
    { source: 'generate', id: 'keys', certificate: { mode: 'internal-ca', subject: `CN=${tenantId},C=DE` } },
    auth,
  )
  await post('/api/credentials', PID_CREDENTIAL, auth)
  await post('/api/presentations', ASK_PRESENTATION, auth)
  return { auth, clientId: client.clientId as string }
}

/** The wallet side of OpenID4VCI (pre-authorized code) over inject: token, nonce, one credential. */
export async function redeem(app: FastifyInstance, credentialOffer: Loose) {
  const issuer = new URL(credentialOffer.credential_issuer).pathname
  const code =
    credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code']
  const token = await app.inject({
    method: 'POST',
    url: `${issuer}/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      'pre-authorized_code': code,
    }).toString(),
  })
  const accessToken = token.json().access_token as string
  const credential = async () => {
    const nonce = (await app.inject({ method: 'POST', url: `${issuer}/nonce` })).json().c_nonce
    const holder = await generateKeyPair('ES256')
    const proof = await new SignJWT({ nonce })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'openid4vci-proof+jwt',
        jwk: await exportJWK(holder.publicKey),
      })
      .setAudience(credentialOffer.credential_issuer)
      .setIssuedAt()
      .sign(holder.privateKey)
    const response = await app.inject({
      method: 'POST',
      url: `${issuer}/credential`,
      headers: { authorization: `Bearer ${accessToken}` },
      payload: { credential_configuration_id: 'pid', proofs: { jwt: [proof] } },
    })
    return { response, holder }
  }
  return { credential }
}

/** An offer of `pid` with `claims`, redeemed by a wallet: the credential and the holder key. */
export async function issue(
  app: FastifyInstance,
  auth: Headers,
  claims: Record<string, unknown> = { given_name: 'Erika', age_over_18: true },
) {
  const offer = await app.inject({
    method: 'POST',
    url: '/api/offers',
    headers: auth,
    payload: { credentialConfigurationIds: ['pid'], claims: { pid: claims }, byReference: false },
  })
  const { sessionId, credentialOffer } = offer.json()
  const { response, holder } = await (await redeem(app, credentialOffer)).credential()
  if (response.statusCode !== 200) throw new Error(`credential: ${response.body}`)
  return {
    credential: response.json().credentials[0].credential as string,
    holder,
    sessionId: sessionId as string,
  }
}

/** A presentation request of `ask`, and the request object the wallet fetches. */
export async function requestPresentation(app: FastifyInstance, auth: Headers, extra: object = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/presentation-requests',
    headers: auth,
    payload: { presentationConfigId: 'ask', ...extra },
  })
  if (response.statusCode !== 201) throw new Error(`presentation request: ${response.body}`)
  const created = response.json()
  const jar = (await app.inject({ url: new URL(created.requestUri).pathname })).body
  return { created, request: decodeJwt(jar) as Loose }
}

/** The wallet answers a request (direct_post) with an SD-JWT+KB disclosing age_over_18 (or `disclose`). */
export async function answer(
  app: FastifyInstance,
  presentation: Awaited<ReturnType<typeof requestPresentation>>,
  issued: Awaited<ReturnType<typeof issue>>,
  disclose: Record<string, boolean> = { age_over_18: true },
) {
  const wallet = new SDJwtVcInstance({
    hasher: digest,
    saltGenerator: generateSalt,
    kbSigner: kbSigner(issued.holder.privateKey),
    kbSignAlg: 'ES256',
  })
  const vp = await wallet.present(issued.credential, disclose, {
    kb: {
      payload: {
        iat: Math.floor(Date.now() / 1000),
        nonce: presentation.request.nonce,
        aud: presentation.request.client_id,
      },
    },
  })
  return app.inject({
    method: 'POST',
    url: new URL(presentation.created.requestUri).pathname.replace('/requests/', '/responses/'),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      vp_token: JSON.stringify({ pid: [vp] }),
      state: presentation.request.state,
    }).toString(),
  })
}
