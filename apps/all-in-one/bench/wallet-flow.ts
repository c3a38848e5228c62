/**
 * Issue 44: the requests a wallet and its integrator make for one pre-authorized SD-JWT VC
 * issuance, as an independent wallet makes them — the integrator creates the offer (by reference)
 * with a token it obtained once and reuses until it expires; the wallet reads the offer, the issuer
 * metadata and the authorization server metadata (RFC 8414 path insertion), takes the endpoints
 * from them, then nonce, token and credential. Each request is named, so the bench can report what
 * each costs the server (request-costs.ts).
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { call, type Step } from './flows'

// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
type Json = Record<string, any>

/** Runs one named request of the flow; the bench's cost pass wraps it to read the server's CPU around it. */
const plainStep: Step = (_name, request) => request()

/** A management token obtained once and reused until a minute before it expires, as an integrator keeps it. */
function integratorToken(base: string, client: { id: string; secret: string }) {
  let token: { value: string; until: number } | undefined
  return async (): Promise<string> => {
    if (token && token.until > Date.now()) return token.value
    const answer = await call(base, '/api/oauth2/token', {
      body: { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret },
    })
    token = { value: answer.access_token, until: Date.now() + (answer.expires_in - 60) * 1000 }
    return token.value
  }
}

/** `/.well-known/<suffix>` inserted between the host and the path of `identifier` (OpenID4VCI §12.2.2, RFC 8414 §3.1). */
const wellKnown = (identifier: string, suffix: string) => {
  const url = new URL(identifier)
  return `${url.origin}/.well-known/${suffix}${url.pathname === '/' ? '' : url.pathname}`
}

async function json(response: Response, what: string): Promise<Json> {
  if (!response.ok) throw new Error(`${what}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Json
}

export async function createWalletFlow(base: string, client: { id: string; secret: string }) {
  const token = integratorToken(base, client)
  const holder = await generateKeyPair('ES256')
  const holderJwk = await exportJWK(holder.publicKey)
  const configurationId = 'pid'

  return async (step: Step = plainStep): Promise<void> => {
    const bearer = `Bearer ${await token()}`
    const created = await step('offer creation (management API)', () =>
      call(base, '/api/offers', {
        body: {
          credentialConfigurationIds: [configurationId],
          claims: { [configurationId]: { given_name: 'Erika', age_over_18: true } },
          byReference: true,
        },
        headers: { authorization: bearer },
      }),
    )
    const offer = await step('offer by reference', async () =>
      json(await fetch(created.credentialOfferUri), 'offer'),
    )
    const issuer = offer.credential_issuer as string
    const metadata = await step('issuer metadata', async () =>
      json(await fetch(wellKnown(issuer, 'openid-credential-issuer')), 'issuer metadata'),
    )
    // OpenID4VCI §12.2.4: without `authorization_servers` the issuer is its own authorization server.
    const asIdentifier = (metadata.authorization_servers?.[0] as string | undefined) ?? issuer
    const as = await step('authorization server metadata', async () =>
      json(await fetch(wellKnown(asIdentifier, 'oauth-authorization-server')), 'AS metadata'),
    )
    const { c_nonce } = await step('nonce', async () =>
      json(await fetch(metadata.nonce_endpoint, { method: 'POST' }), 'nonce'),
    )
    const code = offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code']
    const { access_token } = await step('token', async () =>
      json(
        await fetch(as.token_endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
            'pre-authorized_code': code,
          }),
        }),
        'token',
      ),
    )
    const proof = await new SignJWT({ nonce: c_nonce })
      .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holderJwk })
      .setAudience(issuer)
      .setIssuedAt()
      .sign(holder.privateKey)
    const issued = await step('credential', async () =>
      json(
        await fetch(metadata.credential_endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
          body: JSON.stringify({
            credential_configuration_id: configurationId,
            proofs: { jwt: [proof] },
          }),
        }),
        'credential',
      ),
    )
    if (!issued.credentials?.[0]?.credential) throw new Error('no credential issued')
  }
}
