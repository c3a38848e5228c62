import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import Provider, { errors } from 'oidc-provider'

/** The wallet's redirect URI registered at the external server. */
export const WALLET_REDIRECT = 'https://wallet.example/cb'
export const INTROSPECTION_CLIENT = { id: 'credential-issuer', secret: 'introspection-secret-0123456789' }

// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any

export interface ExternalAsOptions {
  /** The default resource (RFC 8707): a credential issuer identifier, the tokens' `aud`. */
  resource: () => string
  /** `jwt`: RFC 9068 access tokens; `opaque`: reference tokens for introspection (RFC 7662). */
  format: 'jwt' | 'opaque'
  /** Claims of the subject the server puts into its tokens (as a Keycloak protocol mapper would). */
  subjectClaims?: (sub: string) => Record<string, unknown>
  /** Access token lifetime, seconds (default 300). */
  ttl?: number
}

/**
 * A real external OAuth server: oidc-provider with PAR, PKCE, DPoP, RAR (`openid_credential`),
 * resource indicators (the credential issuer as audience), JWT access tokens or introspection.
 * The login and consent are answered by the test (no pages): every authorization is alice's,
 * consenting to what was asked. `issuer_state` (OpenID4VCI 1.0 §5.1.3) is carried from the
 * authorization request into the access token, as a deployment's mapper would.
 */
export async function startExternalAs(options: ExternalAsOptions) {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const issuerStates = new Map<string, string>()
  let jwksFetches = 0
  let introspections = 0
  let provider: Provider

  async function build() {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const key = {
      ...(await exportJWK(privateKey)),
      alg: 'ES256',
      use: 'sig',
      kid: randomBytes(6).toString('hex'),
    }
    provider = new Provider(url, {
      clients: [
        {
          client_id: 'wallet-1',
          token_endpoint_auth_method: 'none',
          redirect_uris: [WALLET_REDIRECT],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          // The server's one key is an ES256 key.
          id_token_signed_response_alg: 'ES256',
          authorization_details_types: ['openid_credential'],
        },
        {
          client_id: INTROSPECTION_CLIENT.id,
          client_secret: INTROSPECTION_CLIENT.secret,
          redirect_uris: [],
          grant_types: [],
          response_types: [],
          id_token_signed_response_alg: 'ES256',
        },
      ],
      jwks: { keys: [key as JWK & { kid: string }] },
      pkce: { required: () => true },
      extraParams: ['issuer_state'],
      ttl: { AccessToken: options.ttl ?? 300 },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      extraTokenClaims: (_ctx, token) => {
        const grantId = (token as { grantId?: string }).grantId
        const issuerState = grantId ? issuerStates.get(grantId) : undefined
        const sub = (token as { accountId?: string }).accountId ?? ''
        return {
          ...(options.subjectClaims?.(sub) ?? {}),
          ...(issuerState ? { issuer_state: issuerState } : {}),
        }
      },
      features: {
        devInteractions: { enabled: false },
        dPoP: { enabled: true },
        pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: true },
        // The types' union has no branch with both RAR and introspection on; the server has.
        introspection: { enabled: true } as never,
        resourceIndicators: {
          enabled: true,
          defaultResource: () => options.resource(),
          useGrantedResource: () => true,
          // Any resource: a wallet may ask a token for another issuer (the wrong-audience case).
          getResourceServerInfo: (_ctx, indicator) => {
            return {
              scope: 'pid badge',
              audience: indicator,
              accessTokenTTL: options.ttl ?? 300,
              accessTokenFormat: options.format,
              ...(options.format === 'jwt' ? { jwt: { sign: { alg: 'ES256' } } } : {}),
            }
          },
        },
        richAuthorizationRequests: {
          enabled: true,
          types: {
            openid_credential: {
              validate: (_ctx, detail) => {
                if (typeof detail.credential_configuration_id !== 'string')
                  throw new errors.InvalidAuthorizationDetails('credential_configuration_id is required')
              },
            },
          },
          authorizationDetailsForGrantSource: (ctx) => ctx.oidc.grant?.rar,
          authorizationDetailsForAccessToken: (_ctx, _token, source) => source?.rar,
          authorizationDetailsForIntrospection: (_ctx, token) => token.rar,
        },
      },
    })
  }

  /** The login and consent of alice, as the server's own pages would end them. */
  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res)
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: 'alice' } },
        { mergeWithLastSubmission: false },
      )
      return
    }
    const asked = details.prompt.details as Json
    const grant = new provider.Grant({ accountId: 'alice', clientId: details.params.client_id as string })
    if (asked.missingOIDCScope) grant.addOIDCScope(asked.missingOIDCScope.join(' '))
    for (const [indicator, scope] of Object.entries(asked.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, (scope as string[]).join(' '))
    for (const detail of asked.rar ?? []) grant.addRar(detail)
    const grantId = await grant.save()
    if (typeof details.params.issuer_state === 'string')
      issuerStates.set(grantId, details.params.issuer_state)
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
  }

  await build()
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/jwks')) jwksFetches++
    if (req.url?.startsWith('/token/introspection')) introspections++
    if (req.url?.startsWith('/interaction/')) {
      interaction(req, res).catch((error: unknown) => {
        res.writeHead(500)
        res.end(String(error))
      })
      return
    }
    provider.callback()(req, res)
  })

  return {
    url,
    /** How often the JWKS was fetched (the issuer's cache refreshes on an unknown kid, bounded). */
    jwksFetches: () => jwksFetches,
    /** How often a token was introspected (RFC 7662). */
    introspections: () => introspections,
    /** A new signing key, the old one gone from the JWKS (a rotation). The server forgets its grants. */
    rotate: build,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
export type ExternalAs = Awaited<ReturnType<typeof startExternalAs>>

const b64 = (bytes: Buffer) => bytes.toString('base64url')
const form = (params: Record<string, string>) => new URLSearchParams(params).toString()

/**
 * A wallet walking the authorization code flow at an external server from the spec text: the
 * credential issuer metadata's `authorization_servers` (OpenID4VCI 1.0 §12.2.4), the server's
 * RFC 8414 metadata (OpenID Connect discovery as its fallback), PAR (RFC 9126) with PKCE S256
 * (RFC 7636), `authorization_details` of type `openid_credential` (§5.1.1) and `issuer_state`
 * (§5.1.3), a DPoP key (RFC 9449) for the token, then the credential request with a key proof.
 */
export async function externalWallet() {
  const dpopKey = await generateKeyPair('ES256')
  const dpopJwk = await exportJWK(dpopKey.publicKey)
  const cookies = new Map<string, string>()

  /** RFC 9449 §4.2; `nonce` when the server gave one (§8, `DPoP-Nonce`). */
  async function dpopProof(htm: string, htu: string, accessToken?: string, key = dpopKey, nonce?: string) {
    return new SignJWT({
      htm,
      htu,
      jti: b64(randomBytes(16)),
      ...(nonce ? { nonce } : {}),
      ...(accessToken ? { ath: b64(createHash('sha256').update(accessToken).digest()) } : {}),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(key.publicKey) })
      .setIssuedAt()
      .sign(key.privateKey)
  }

  /** GET following redirects with cookies, until the wallet's redirect URI. */
  async function follow(start: string): Promise<URL> {
    let at = start
    for (let hop = 0; hop < 15; hop++) {
      if (at.startsWith(WALLET_REDIRECT)) return new URL(at)
      const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
      const response = await fetch(at, { redirect: 'manual', headers: { cookie } })
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';')
        const [name, ...value] = (pair as string).split('=')
        cookies.set(name as string, value.join('='))
      }
      const location = response.headers.get('location')
      if (!location) throw new Error(`no redirect from ${at}: ${response.status} ${await response.text()}`)
      at = new URL(location, at).toString()
    }
    throw new Error('too many redirects')
  }

  return {
    dpopJkt: () => calculateJwkThumbprint(dpopJwk),
    dpopProof,
    /** An access token from a server the issuer lists, for `configurationId` (RAR) or `scope`. */
    async authorize(
      credentialIssuer: string,
      ask: { configurationId?: string; scope?: string; issuerState?: string; server?: string; via?: string },
    ) {
      // `via`: the origin that serves the issuer (a process behind the ingress of PUBLIC_URL).
      const metadataUrl = new URL(
        `/.well-known/openid-credential-issuer${new URL(credentialIssuer).pathname}`,
        ask.via ?? credentialIssuer,
      )
      const issuerMetadata = (await (await fetch(metadataUrl)).json()) as Json
      // The offer's authorization_server, else the first server that is not the issuer itself.
      const listed = issuerMetadata.authorization_servers as string[]
      const asIssuer = ask.server ?? (listed.find((s) => s !== credentialIssuer) as string)
      if (!listed.includes(asIssuer)) throw new Error(`${asIssuer} is not in authorization_servers`)
      const discovered = await fetch(`${asIssuer}/.well-known/oauth-authorization-server`)
      const asMetadata = (await (discovered.ok
        ? discovered
        : await fetch(`${asIssuer}/.well-known/openid-configuration`)
      ).json()) as Json
      const verifier = b64(randomBytes(32))
      const pushed = await fetch(asMetadata.pushed_authorization_request_endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          dpop: await dpopProof('POST', asMetadata.pushed_authorization_request_endpoint),
        },
        body: form({
          client_id: 'wallet-1',
          response_type: 'code',
          redirect_uri: WALLET_REDIRECT,
          code_challenge: b64(createHash('sha256').update(verifier).digest()),
          code_challenge_method: 'S256',
          resource: credentialIssuer,
          ...(ask.scope ? { scope: ask.scope } : {}),
          ...(ask.configurationId
            ? {
                authorization_details: JSON.stringify([
                  { type: 'openid_credential', credential_configuration_id: ask.configurationId },
                ]),
              }
            : {}),
          ...(ask.issuerState ? { issuer_state: ask.issuerState } : {}),
        }),
      })
      const par = (await pushed.json()) as Json
      if (pushed.status !== 201) throw new Error(`PAR: ${pushed.status} ${JSON.stringify(par)}`)
      const back = await follow(
        `${asMetadata.authorization_endpoint}?${form({ client_id: 'wallet-1', request_uri: par.request_uri })}`,
      )
      const code = back.searchParams.get('code')
      if (!code) throw new Error(`no code: ${back}`)
      const answer = await fetch(asMetadata.token_endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          dpop: await dpopProof('POST', asMetadata.token_endpoint),
        },
        body: form({
          grant_type: 'authorization_code',
          code,
          client_id: 'wallet-1',
          redirect_uri: WALLET_REDIRECT,
          code_verifier: verifier,
          resource: credentialIssuer,
        }),
      })
      const token = (await answer.json()) as Json
      if (answer.status !== 200) throw new Error(`token: ${answer.status} ${JSON.stringify(token)}`)
      return token as { access_token: string; token_type: string; authorization_details?: Json[] }
    },
  }
}
export type ExternalWallet = Awaited<ReturnType<typeof externalWallet>>
