import { startWorld, type World, type WorldOptions } from '@credential-service/management/testing'
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { buildIssuerApp } from '../src/app'

export type { World } from '@credential-service/management/testing'

/**
 * The `issuance` world (test/worlds/issuance) with the issuer served alone, as its own pod: the
 * management API beside it on the same database creates what a test needs at run time (offers).
 */
export function startIssuerWorld(options: Omit<WorldOptions, 'apps'> = {}): Promise<World> {
  return startWorld('issuance', {
    ...options,
    apps: ({ config, database, now }) => [
      buildIssuerApp({ config, database, noncePurgeSeconds: 0, ...(now ? { now } : {}) }),
    ],
  })
}

type Headers = Record<string, string>

/** A pre-authorized offer of `configurations` made through the management API: its code and session. */
export async function preAuthorizedOffer(
  management: FastifyInstance,
  auth: Headers,
  configurations: string[],
  claims: Record<string, Record<string, unknown>>,
  extra: object = {},
) {
  const response = await management.inject({
    method: 'POST',
    url: '/api/offers',
    headers: auth,
    payload: { credentialConfigurationIds: configurations, claims, ...extra },
  })
  if (response.statusCode !== 201) throw new Error(`offer: ${response.statusCode} ${response.body}`)
  const created = response.json()
  return {
    sessionId: created.sessionId as string,
    credentialOffer: created.credentialOffer,
    credentialOfferUri: created.credentialOfferUri as string | undefined,
    code: created.credentialOffer?.grants?.['urn:ietf:params:oauth:grant-type:pre-authorized_code']?.[
      'pre-authorized_code'
    ] as string,
  }
}

/** POST a form to the issuer, as a wallet does at /token and /par. */
export const postForm = (
  app: FastifyInstance,
  url: string,
  form: Record<string, string>,
  headers: Headers = {},
) =>
  app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  })

export const PRE_AUTHORIZED_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'

/** A fresh ES256 holder key and a proof of possession of it (OpenID4VCI 1.0 §8.2.1.1) for `nonce`. */
export async function proofJwt(audience: string, nonce: string | undefined) {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  return new SignJWT(nonce === undefined ? {} : { nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(publicKey) })
    .setAudience(audience)
    .setIssuedAt()
    .sign(privateKey)
}

/**
 * The wallet side over HTTP for tenant `tenant` of `world`: a pre-authorized offer of
 * `configuration` (given name Erika, `offerExtra` added to the offer body), its access token, a
 * nonce and `proofs` proofs.
 */
export async function readyToRequest(
  world: World,
  tenant: 'a' | 'b',
  configuration = 'pid',
  proofs = 1,
  offerExtra: object = {},
) {
  const { auth, id, issuer } = world.tenants[tenant]
  const offer = await preAuthorizedOffer(
    world.management,
    auth,
    [configuration],
    { [configuration]: { given_name: 'Erika', family_name: 'Mustermann' } },
    offerExtra,
  )
  const token = await postForm(world.app, `/issuers/${id}/token`, {
    grant_type: PRE_AUTHORIZED_GRANT,
    'pre-authorized_code': offer.code,
  })
  if (token.statusCode !== 200) throw new Error(`token: ${token.body}`)
  // A batch proves several keys over one nonce.
  const nonce = (await world.app.inject({ method: 'POST', url: `/issuers/${id}/nonce` })).json().c_nonce
  const jwts = await Promise.all(Array.from({ length: proofs }, () => proofJwt(issuer, nonce)))
  return {
    offer,
    accessToken: token.json().access_token as string,
    body: { credential_configuration_id: configuration, proofs: { jwt: jwts } },
  }
}

/** POST /credential of `tenant` with a Bearer token and a JSON body. */
export const requestCredential = (
  world: World,
  tenant: string,
  accessToken: string | undefined,
  body: unknown,
) =>
  world.app.inject({
    method: 'POST',
    url: `/issuers/${tenant}/credential`,
    headers: {
      'content-type': 'application/json',
      ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  })
