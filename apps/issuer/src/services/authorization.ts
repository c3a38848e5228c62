import { randomBytes } from 'node:crypto'
import { type CredentialConfig, DomainError, newId, ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import {
  type AuthorizationRequestRow,
  createAuthorizationRequestRepository,
  createIssuanceSessionRepository,
  createLoginProviderRepository,
  sessionByIssuerState,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { loginClaims } from './login-claims'
import { parsePushedRequest } from './pushed-request'
import { finishLogin, type LoginSecrets, startLogin } from './upstream-login'

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'
/** PAR §2.2: short-lived; long enough for the wallet to open the browser. */
export const REQUEST_URI_SECONDS = 60
/** Time for the holder to log in at the upstream provider. */
const LOGIN_SECONDS = 600
/** RFC 6749 §4.1.2: a maximum lifetime of 10 minutes is recommended; the wallet redeems it at once. */
export const CODE_SECONDS = 60
/** Lifetime of an issuance session a wallet-initiated flow creates. */
const SESSION_SECONDS = 600

const handle = () => randomBytes(32).toString('base64url')

/** Where the browser goes next: the wallet's redirect_uri, or the upstream login page. */
export interface AuthorizationStep {
  redirect: string
}

/** PAR, /authorize and the upstream login callback of one tenant (OpenID4VCI 1.0 §5). */
export function createAuthorizationService(deps: ProtocolDeps, tenantId: string) {
  const issuer = `${deps.publicUrl}/issuers/${tenantId}`
  const callbackUrl = `${issuer}/authorize/callback`
  const requests = createAuthorizationRequestRepository(deps.db, tenantId)
  const sessions = createIssuanceSessionRepository(deps.db, tenantId)
  const loginDeps = { cipher: deps.keys.cipher, outbound: deps.outbound, now: deps.now }
  const secretsAad = (id: string) => `login:${tenantId}/${id}`
  const configsOf = async (ids: string[]) =>
    (await deps.tenants.credentialConfigs(tenantId)).filter((c) => ids.includes(c.id))

  /** RFC 9207: `iss` on every answer, success or error. */
  function toWallet(row: AuthorizationRequestRow, params: Record<string, string>): AuthorizationStep {
    const url = new URL(row.redirectUri)
    for (const [key, value] of Object.entries({
      ...params,
      ...(row.state ? { state: row.state } : {}),
      iss: issuer,
    }))
      url.searchParams.set(key, value)
    return { redirect: url.toString() }
  }

  async function denied(row: AuthorizationRequestRow, description: string): Promise<AuthorizationStep> {
    await requests.fail(row.id)
    return toWallet(row, { error: 'access_denied', error_description: description })
  }

  async function issueCode(row: AuthorizationRequestRow, sessionId: string): Promise<AuthorizationStep> {
    const code = handle()
    const expiresAt = new Date(deps.now().getTime() + CODE_SECONDS * 1000)
    if (!(await requests.issueCode(row.id, row.status, codeHash(code), sessionId, expiresAt)))
      throw new ProtocolError('invalid_request', 'this authorization request is no longer pending')
    return toWallet(row, { code })
  }

  return {
    /** Pushed authorization request endpoint (RFC 9126 §2); `dpopJkt` from a verified DPoP header. */
    async push(body: Record<string, unknown>, dpopJkt?: string) {
      const configs = await deps.tenants.credentialConfigs(tenantId)
      const pushed = parsePushedRequest(body, configs)
      if (dpopJkt && pushed.dpopJkt && dpopJkt !== pushed.dpopJkt)
        throw new ProtocolError('invalid_dpop_proof', 'dpop_jkt does not match the DPoP proof key')
      const now = deps.now()
      // I-25, S-39: an unknown or forged issuer_state grants nothing and is ignored.
      const offer = pushed.issuerState
        ? await sessionByIssuerState(deps.db, tenantId, codeHash(pushed.issuerState), now)
        : undefined
      let requested = [...new Set([...pushed.detailConfigurationIds, ...pushed.scopeConfigurationIds])]
      if (offer) {
        requested = requested.length
          ? requested.filter((id) => offer.credentialConfigurationIds.includes(id))
          : offer.credentialConfigurationIds
      }
      if (requested.length === 0)
        throw new ProtocolError('invalid_scope', 'no credential configuration of this issuer was requested')
      const requestUri = handle()
      await requests.insert({
        id: newId('par'),
        requestUriHash: codeHash(requestUri),
        clientId: pushed.clientId,
        redirectUri: pushed.redirectUri,
        codeChallenge: pushed.codeChallenge,
        state: pushed.state ?? null,
        credentialConfigurationIds: requested,
        detailConfigurationIds: pushed.detailConfigurationIds.filter((id) => requested.includes(id)),
        sessionId: offer?.id ?? null,
        dpopJkt: dpopJkt ?? pushed.dpopJkt ?? null,
        expiresAt: new Date(now.getTime() + REQUEST_URI_SECONDS * 1000),
      })
      return { request_uri: `${REQUEST_URI_PREFIX}${requestUri}`, expires_in: REQUEST_URI_SECONDS }
    },

    /**
     * Authorization endpoint (RFC 6749 §4.1.1 via PAR §4): only `client_id` + a pushed
     * `request_uri` (HAIP: no plain requests, I-33). Errors before the request is known are
     * thrown (rendered as JSON, never a redirect to an unchecked URI).
     */
    async authorize(query: { client_id?: string; request_uri?: string }): Promise<AuthorizationStep> {
      if (!query.request_uri?.startsWith(REQUEST_URI_PREFIX) || !query.client_id)
        throw new ProtocolError(
          'invalid_request',
          'authorization requests must be pushed (PAR): send client_id and request_uri',
        )
      const now = deps.now()
      const row = await requests.takeRequestUri(
        codeHash(query.request_uri.slice(REQUEST_URI_PREFIX.length)),
        query.client_id,
        now,
        { expiresAt: new Date(now.getTime() + LOGIN_SECONDS * 1000) },
      )
      if (!row)
        throw new ProtocolError(
          'invalid_request',
          'request_uri is unknown, expired, used or pushed by another client',
        )
      const configs = await configsOf(row.credentialConfigurationIds)
      const providerId = configs.find((c) => c.userAuthentication)?.userAuthentication?.loginProviderId
      if (providerId) {
        const provider = await createLoginProviderRepository(deps.db, tenantId).row(providerId)
        if (!provider) return denied(row, 'the login provider of this credential is gone')
        const state = handle()
        try {
          const { url, secrets } = await startLogin(provider, { redirectUri: callbackUrl, state }, loginDeps)
          await requests.startLogin(
            row.id,
            codeHash(state),
            deps.keys.cipher.encrypt({ ...secrets }, secretsAad(row.id)),
          )
          return { redirect: url }
        } catch (error) {
          deps.log.warn({ tenantId, loginProviderId: providerId, err: error }, 'login provider failed')
          return denied(row, 'the login provider is not available')
        }
      }
      // An offer's own claims (or its attribute provider) stand for the holder: no login needed.
      if (row.sessionId) return issueCode(row, row.sessionId)
      return denied(row, 'these credentials need an offer: no holder login is configured')
    },

    /** The browser comes back from the upstream provider (OIDC Core §3.1.2.5). */
    async callback(query: { state?: string; code?: string; error?: string }): Promise<AuthorizationStep> {
      const row = query.state ? await requests.takeLoginState(codeHash(query.state), deps.now()) : undefined
      if (!row?.loginSecretsEncrypted)
        throw new ProtocolError('invalid_request', 'unknown, expired or used login state')
      if (query.error || !query.code) return denied(row, 'the holder did not log in')
      const secrets = deps.keys.cipher.decrypt<LoginSecrets>(row.loginSecretsEncrypted, secretsAad(row.id))
      const configs = await configsOf(row.credentialConfigurationIds)
      const providerId = configs.find((c) => c.userAuthentication)?.userAuthentication
        ?.loginProviderId as string
      try {
        const provider = await createLoginProviderRepository(deps.db, tenantId).row(providerId)
        if (!provider) return denied(row, 'the login provider of this credential is gone')
        const user = await finishLogin(
          provider,
          { code: query.code, redirectUri: callbackUrl, secrets },
          loginDeps,
        )
        const sessionId = row.sessionId ?? newId('ses')
        const claims = await loginClaims(deps, tenantId, { sessionId, configs, user })
        if (!claims.ok) return denied(row, claims.reason)
        await storeClaims(row, sessionId, claims.claims, configs)
        return issueCode(row, sessionId)
      } catch (error) {
        deps.log.warn({ tenantId, loginProviderId: providerId, err: error }, 'holder login failed')
        return denied(row, error instanceof DomainError ? error.detail : 'the login failed')
      }
    },
  }

  /** Claims from the login join the offer's (or start a wallet-initiated session), sealed. */
  async function storeClaims(
    row: AuthorizationRequestRow,
    sessionId: string,
    claims: Record<string, Record<string, unknown>>,
    configs: CredentialConfig[],
  ) {
    if (row.sessionId) {
      const session = await sessions.get(sessionId)
      const existing = session?.claimsEncrypted
        ? deps.keys.sessionData.openClaims(tenantId, sessionId, session.claimsEncrypted)
        : {}
      await sessions.sealClaims(
        sessionId,
        deps.keys.sessionData.sealClaims(tenantId, sessionId, { ...existing, ...claims }),
      )
      return
    }
    await sessions.insert({
      id: sessionId,
      status: 'offered',
      credentialConfigurationIds: configs.map((c) => c.id),
      claimsEncrypted: deps.keys.sessionData.sealClaims(tenantId, sessionId, claims),
      // Never handed out: a wallet-initiated session redeems through its authorization code only.
      preAuthorizedCodeHash: codeHash(handle()),
      createdByClientId: `wallet:${row.clientId}`.slice(0, 200),
      expiresAt: new Date(deps.now().getTime() + SESSION_SECONDS * 1000),
    })
  }
}
