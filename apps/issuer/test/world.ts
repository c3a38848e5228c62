import { startWorld, type World, type WorldOptions } from '@credential-service/management/testing'
import type { FastifyInstance } from 'fastify'
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
