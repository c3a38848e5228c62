import { randomBytes } from 'node:crypto'
import {
  type AuthorizationRequest,
  DomainError,
  newId,
  type ParRequest,
  ProtocolError,
  REQUEST_URI_PREFIX,
} from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import {
  type AuthorizationRequestRow,
  createAuthorizationRequestRepository,
  createIssuanceSessionRepository,
  createLoginProviderRepository,
  createPresentationSessionRepository,
  type LoginProviderRow,
  PRESENTATION_LOGIN_CREATOR,
  type PresentationSessionRow,
  sessionByIssuerState,
} from '@credential-service/db-schema'
import {
  createPresentationSession,
  offerClaims,
  type ProtocolDeps,
  presentationResult,
} from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'
import type { WalletClient } from './client-attestation'
import { loginBrowserOf, loginCookie, newLoginBrowser } from './login-browser'
import { type HolderLogin, loginClaims } from './login-claims'
import { type PresentationPage, returnPage } from './presentation-page'
import { checkRequested, loginProviderOf, pushedRequestOf } from './pushed-request'
import { finishLogin, isOpenIdProvider, type LoginSecrets, startLogin } from './upstream-login'

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
  /** `Set-Cookie` binding the upstream login to this browser. */
  cookie?: string
}

/** A presentation login: the page the browser is shown (200), bound to it by the login cookie. */
export interface PresentationLoginStep {
  page: PresentationPage
  cookie: string
}

/** What the presentation login page's poll learns (`redirect`: to the wallet, with a code or access_denied). */
export type PresentationStatus =
  | { status: 'pending' }
  | { status: 'done'; redirect: string }
  | { status: 'failed'; reason: string; redirect: string }

/**
 * The class of a failed presentation's reason, for the holder's page (the whole reason is in the
 * presentation session, for the operator).
 */
export function failureClass(reason: string | null): string {
  const text = (reason ?? '').toLowerCase()
  if (/revoked|suspended/.test(text)) return 'the credential is revoked or suspended'
  if (/trust|issuer|certificate|x5c|chain|signature/.test(text))
    return 'the credential’s issuer is not trusted'
  if (/(request|session)\b.*\bexpired/.test(text)) return 'the request expired'
  if (/claim|missing|dcql|query|match/.test(text)) return 'the credential does not hold the claims asked for'
  if (/access_denied|declined|wallet/.test(text)) return 'the wallet declined'
  return 'the presentation could not be verified'
}

/** What authenticated the pushed request besides its parameters. */
export interface PushSender {
  /** JWK thumbprint of a verified DPoP header. */
  dpopJkt?: string | undefined
  walletClient?: WalletClient | undefined
}

/** PAR, /authorize and the upstream login callback of one tenant (OpenID4VCI 1.0 §5). */
export function createAuthorizationService(scope: TenantScope<ProtocolDeps>) {
  const { deps, tenantId } = scope
  const issuer = scope.issuerUrl
  const callbackUrl = `${issuer}/authorize/callback`
  const cookiePath = new URL(issuer).pathname
  const requests = createAuthorizationRequestRepository(deps.db, tenantId)
  const sessions = createIssuanceSessionRepository(deps.db, tenantId)
  const loginProviders = createLoginProviderRepository(deps.db, tenantId)
  const presentations = createPresentationSessionRepository(deps.db, tenantId)
  const presentationUrl = `${issuer}/authorize/presentation`
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

  /**
   * A refusal at /authorize, before any login: the redirect_uri of a request without an offer is
   * the unregistered wallet's say-so, so the browser is not sent there (an open redirect).
   */
  async function refused(row: AuthorizationRequestRow, description: string): Promise<AuthorizationStep> {
    if (row.sessionId) return denied(row, description)
    await requests.fail(row.id)
    throw new ProtocolError('access_denied', description)
  }

  async function issueCode(
    row: AuthorizationRequestRow,
    sessionId: string,
    loginClaimsEncrypted?: string,
  ): Promise<AuthorizationStep> {
    return toWallet(row, { code: await newCode(row, sessionId, loginClaimsEncrypted) })
  }

  /** Sends the browser to the upstream login, bound to it by the login cookie. */
  async function login(
    row: AuthorizationRequestRow,
    providerId: string,
    browser: string | undefined,
  ): Promise<AuthorizationStep | PresentationLoginStep> {
    const provider = await loginProviders.row(providerId)
    if (!provider) return refused(row, 'the login provider of this credential is gone')
    if (!isOpenIdProvider(provider)) return presentationLogin(row, provider, browser)
    const state = handle()
    const value = browser ?? newLoginBrowser()
    try {
      const { url, secrets } = await startLogin(provider, { redirectUri: callbackUrl, state }, loginDeps)
      await requests.startLogin(row.id, {
        loginStateHash: codeHash(state),
        loginSecretsEncrypted: deps.keys.cipher.encrypt({ ...secrets }, secretsAad(row.id)),
        loginProviderId: providerId,
        loginBrowserHash: codeHash(value),
      })
      return { redirect: url, cookie: loginCookie(value, cookiePath, LOGIN_SECONDS) }
    } catch (error) {
      deps.log.warn({ tenantId, loginProviderId: providerId, err: error }, 'login provider failed')
      return refused(row, 'the login provider is not available')
    }
  }

  /** The tenant's issuer display name for the login pages. */
  async function titleOf() {
    return (await deps.tenants.tenant(tenantId))?.name ?? 'Credential issuer'
  }

  /**
   * A login by presenting a credential (OpenID4VP 1.0): two sessions for the provider's
   * presentation configuration, one cross-device (a QR code; done when this browser's page sees it
   * verified) and one same-device (its redirect comes back here with a response code, §13.3,
   * accepted only from this browser, §14.2), and the page showing both, bound to the browser by the
   * login cookie.
   */
  async function presentationLogin(
    row: AuthorizationRequestRow,
    provider: LoginProviderRow,
    browser: string | undefined,
  ): Promise<AuthorizationStep | PresentationLoginStep> {
    const config = provider.presentationConfigId
      ? await deps.tenants.presentationConfig(tenantId, provider.presentationConfigId)
      : undefined
    if (!config) return refused(row, 'the presentation configuration of this login is gone')
    const value = browser ?? newLoginBrowser()
    const lifetimeSeconds = Math.max(1, Math.floor((row.expiresAt.getTime() - deps.now().getTime()) / 1000))
    const common = {
      config,
      responseMode: config.responseMode,
      lifetimeSeconds,
      webhookEndpointId: null,
      // Not a client id (those have no '/'): the retention job knows these sessions by it.
      createdByClientId: `${PRESENTATION_LOGIN_CREATOR}${provider.id}`.slice(0, 200),
    }
    try {
      const crossDevice = await createPresentationSession(deps, tenantId, common)
      const sameDevice = await createPresentationSession(deps, tenantId, {
        ...common,
        redirectUri: `${presentationUrl}/return?${new URLSearchParams({ request: row.id })}`,
      })
      const started = await requests.startPresentationLogin(row.id, {
        loginProviderId: provider.id,
        loginBrowserHash: codeHash(value),
        presentationSessionId: crossDevice.id,
        sameDevicePresentationSessionId: sameDevice.id,
      })
      if (!started)
        throw new ProtocolError('invalid_request', 'this authorization request is no longer pending')
      return {
        page: {
          title: await titleOf(),
          crossDeviceUri: crossDevice.authorizationRequestUri,
          sameDeviceUri: sameDevice.authorizationRequestUri,
          statusUrl: `${presentationUrl}/status?${new URLSearchParams({ request: row.id })}`,
        },
        cookie: loginCookie(value, cookiePath, LOGIN_SECONDS),
      }
    } catch (error) {
      if (error instanceof ProtocolError) throw error
      deps.log.warn({ tenantId, loginProviderId: provider.id, err: error }, 'presentation login failed')
      return refused(row, 'the presentation login is not available')
    }
  }

  /** The open presentation login of this request in the browser holding its cookie, or a refusal. */
  async function presentationLoginOf(requestId: string | undefined, cookie: string | undefined) {
    const browser = loginBrowserOf(cookie)
    const row =
      browser && requestId ? await requests.presentationLoginOf(requestId, codeHash(browser)) : undefined
    if (!browser || !row?.presentationSessionId || !row.sameDevicePresentationSessionId)
      throw new ProtocolError(
        'invalid_request',
        'no presentation login of this request was started in this browser',
        {
          status: 403,
        },
      )
    return { row, browserHash: codeHash(browser) }
  }

  /**
   * The holder presented: the request moves authorizing → logged_in in one conditional update (of
   * two browsers or processes, one goes on), then the result, taken out of the presentation
   * session, fills the claims and the code is issued (or the wallet is told access_denied).
   */
  async function finishPresentation(
    row: AuthorizationRequestRow,
    browserHash: string,
    take: () => Promise<PresentationSessionRow | undefined>,
  ): Promise<AuthorizationStep | undefined> {
    const taken = await requests.takePresentationLogin(row.id, browserHash, deps.now())
    if (!taken) return undefined
    const session = await take()
    const presented = session ? presentationResult(deps.keys.sessionData, session) : null
    if (!session || !presented) return denied(taken, 'the presentation result is gone')
    try {
      const outcome = await completeLogin(taken, {
        kind: 'presentation',
        presentationConfigId: session.presentationConfigId,
        presented: presented as Record<string, Record<string, unknown>[]>,
      })
      return 'code' in outcome ? toWallet(taken, outcome) : denied(taken, outcome.denied)
    } catch (error) {
      deps.log.warn({ tenantId, err: error }, 'presentation login failed')
      return denied(taken, error instanceof DomainError ? error.detail : 'the login failed')
    }
  }

  /** Ends a presentation login as refused (once: a conditional update first). */
  async function presentationDenied(row: AuthorizationRequestRow, browserHash: string, reason: string) {
    const taken = await requests.takePresentationLogin(row.id, browserHash, new Date(0))
    return taken ? denied(taken, reason) : undefined
  }

  return {
    completeLogin,

    /**
     * The page's poll (bound to the login cookie): a verified cross-device session finishes the
     * login; a failed session of either kind, or an expired login, ends it with access_denied.
     */
    async presentationStatus(
      requestId: string | undefined,
      cookie: string | undefined,
    ): Promise<PresentationStatus> {
      const { row, browserHash } = await presentationLoginOf(requestId, cookie)
      if (row.status !== 'authorizing') return { status: 'pending' }
      const [crossDevice, sameDevice] = await Promise.all([
        presentations.get(row.presentationSessionId as string),
        presentations.get(row.sameDevicePresentationSessionId as string),
      ])
      if (crossDevice?.status === 'verified') {
        const step = await finishPresentation(row, browserHash, () =>
          presentations.takeResult(crossDevice.id),
        )
        if (!step) return { status: 'pending' }
        const error = new URL(step.redirect).searchParams.get('error_description')
        return error
          ? { status: 'failed', reason: error, redirect: step.redirect }
          : { status: 'done', redirect: step.redirect }
      }
      const failed = [crossDevice, sameDevice].find((s) => s?.status === 'failed')
      const expired = row.expiresAt.getTime() <= deps.now().getTime()
      if (failed || expired || !crossDevice || !sameDevice) {
        const reason = failed ? failureClass(failed.failureReason) : 'the request expired'
        const step = await presentationDenied(
          row,
          browserHash,
          `the presentation was not accepted: ${reason}`,
        )
        return step ? { status: 'failed', reason, redirect: step.redirect } : { status: 'pending' }
      }
      return { status: 'pending' }
    },

    /** The same-device return page (the response code is in the fragment; the page posts it). */
    async presentationReturnPage(requestId: string) {
      return returnPage(await titleOf(), `${presentationUrl}/return`, requestId)
    },

    /**
     * The same-device wallet's redirect, posted by the return page (OpenID4VP 1.0 §13.3): the
     * response code releases the same-device session's result once, and only from the browser that
     * holds this request's login cookie (§14.2, session fixation); anything else is refused without
     * a code.
     */
    async presentationReturn(
      requestId: string | undefined,
      responseCode: string | undefined,
      cookie: string | undefined,
    ): Promise<AuthorizationStep> {
      const { row, browserHash } = await presentationLoginOf(requestId, cookie)
      const refusal = new ProtocolError(
        'invalid_request',
        'the response code is unknown, used or not of this login',
        {
          status: 403,
        },
      )
      if (row.status !== 'authorizing' || !responseCode) throw refusal
      const sessionId = row.sameDevicePresentationSessionId as string
      const released = await presentations.releaseResult(sessionId, codeHash(responseCode))
      if (!released) throw refusal
      const step = await finishPresentation(row, browserHash, async () => released)
      if (!step) throw refusal
      return step
    },
    /** Pushed authorization request endpoint (RFC 9126 §2). */
    async push(request: ParRequest, sender: PushSender = {}) {
      const { requestUri } = await pushRow(request, sender)
      return { request_uri: `${REQUEST_URI_PREFIX}${requestUri}`, expires_in: REQUEST_URI_SECONDS }
    },
    pushRow,
    /** A code for a request that needs no holder login (an offer's claims stand for the holder). */
    codeWithoutLogin: (row: AuthorizationRequestRow, sessionId: string) => newCode(row, sessionId),

    /**
     * Authorization endpoint (RFC 6749 §4.1.1 via PAR §4), with a parsed `client_id` + pushed
     * `request_uri` (zAuthorizationRequest). Errors before the request is known are thrown
     * (rendered as JSON, never a redirect to an unchecked URI). `cookie` is the browser's Cookie
     * header: a reload before the login completed restarts the login in the same browser.
     */
    async authorize(
      query: AuthorizationRequest,
      cookie?: string,
    ): Promise<AuthorizationStep | PresentationLoginStep> {
      const now = deps.now()
      const requestUriHash = codeHash(query.request_uri.slice(REQUEST_URI_PREFIX.length))
      const browser = loginBrowserOf(cookie)
      const row =
        (await requests.takeRequestUri(requestUriHash, query.client_id, now, {
          expiresAt: new Date(now.getTime() + LOGIN_SECONDS * 1000),
        })) ??
        (browser
          ? await requests.retakeRequestUri(requestUriHash, query.client_id, codeHash(browser), now)
          : undefined)
      if (!row)
        throw new ProtocolError(
          'invalid_request',
          'request_uri is unknown, expired, used or pushed by another client',
        )
      const providerId = loginProviderOf(await configsOf(row.credentialConfigurationIds))
      if (providerId) return login(row, providerId, browser)
      // An offer's own claims (or its attribute provider) stand for the holder: no login needed.
      if (row.sessionId) return issueCode(row, row.sessionId)
      return refused(row, 'these credentials need an offer: no holder login is configured')
    },

    /**
     * The browser comes back from the upstream provider (OIDC Core §3.1.2.5), with the login
     * cookie of the browser sent there; `iss` is checked per RFC 9207.
     */
    async callback(
      query: { state?: string; code?: string; error?: string; iss?: string },
      cookie?: string,
    ): Promise<AuthorizationStep> {
      const row = query.state ? await requests.takeLoginState(codeHash(query.state), deps.now()) : undefined
      if (!row?.loginSecretsEncrypted || !row.loginProviderId)
        throw new ProtocolError('invalid_request', 'unknown, expired or used login state')
      const browser = loginBrowserOf(cookie)
      if (!browser || codeHash(browser) !== row.loginBrowserHash) {
        await requests.fail(row.id)
        throw new ProtocolError('invalid_request', 'this login was not started in this browser')
      }
      if (query.error || !query.code) return denied(row, 'the holder did not log in')
      const secrets = deps.keys.cipher.decrypt<LoginSecrets>(row.loginSecretsEncrypted, secretsAad(row.id))
      const providerId = row.loginProviderId
      try {
        const provider = await loginProviders.row(providerId)
        if (!provider || !isOpenIdProvider(provider))
          return denied(row, 'the login provider of this credential is gone')
        const user = await finishLogin(
          provider,
          { code: query.code, iss: query.iss, redirectUri: callbackUrl, secrets },
          loginDeps,
        )
        const outcome = await completeLogin(row, { kind: 'openid', user })
        return 'code' in outcome ? toWallet(row, outcome) : denied(row, outcome.denied)
      } catch (error) {
        deps.log.warn({ tenantId, loginProviderId: providerId, err: error }, 'holder login failed')
        return denied(row, error instanceof DomainError ? error.detail : 'the login failed')
      }
    },
  }

  /**
   * Stores a pushed request (PAR, or the parameters of an Authorization Challenge Request): its row
   * id, the request_uri handle (without its prefix) and the configurations requested.
   */
  async function pushRow(request: ParRequest, sender: PushSender = {}) {
    const configs = await deps.tenants.credentialConfigs(tenantId)
    const pushed = pushedRequestOf(request, configs)
    const { dpopJkt, walletClient } = sender
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
    checkRequested(
      configs.filter((c) => requested.includes(c.id)),
      { offered: offer !== undefined, attested: walletClient !== undefined },
    )
    const requestUri = handle()
    const id = newId('par')
    await requests.insert({
      id,
      requestUriHash: codeHash(requestUri),
      clientId: pushed.clientId,
      redirectUri: pushed.redirectUri,
      codeChallenge: pushed.codeChallenge,
      state: pushed.state ?? null,
      credentialConfigurationIds: requested,
      detailConfigurationIds: pushed.detailConfigurationIds.filter((id) => requested.includes(id)),
      sessionId: offer?.id ?? null,
      dpopJkt: dpopJkt ?? pushed.dpopJkt ?? null,
      attestedClientId: walletClient?.clientId ?? null,
      attestationJkt: walletClient?.instanceJkt ?? null,
      expiresAt: new Date(now.getTime() + REQUEST_URI_SECONDS * 1000),
    })
    return { id, requestUri, requested: configs.filter((c) => requested.includes(c.id)) }
  }

  /** A fresh authorization code for a request whose holder is known, bound to its session. */
  async function newCode(row: AuthorizationRequestRow, sessionId: string, loginClaimsEncrypted?: string) {
    const code = handle()
    const expiresAt = new Date(deps.now().getTime() + CODE_SECONDS * 1000)
    const issued = await requests.issueCode(row.id, row.status, {
      codeHash: codeHash(code),
      sessionId,
      expiresAt,
      ...(loginClaimsEncrypted ? { loginClaimsEncrypted } : {}),
    })
    if (!issued) throw new ProtocolError('invalid_request', 'this authorization request is no longer pending')
    return code
  }

  /**
   * The holder logged in (upstream or by a presentation): their claims fill the requested
   * configurations, kept sealed with the request (an offer's) or in a new session (a
   * wallet-initiated flow), and the request gets its code. A refusal names why.
   */
  async function completeLogin(
    row: AuthorizationRequestRow,
    login: HolderLogin,
  ): Promise<{ code: string } | { denied: string }> {
    const configs = await configsOf(row.credentialConfigurationIds)
    const sessionId = row.sessionId ?? newId('ses')
    const claims = await loginClaims(scope, { sessionId, configs, login })
    if (!claims.ok) return { denied: claims.reason }
    if (!row.sessionId) {
      await startSession(
        row,
        sessionId,
        configs.map((c) => c.id),
        claims.claims,
      )
      return { code: await newCode(row, sessionId) }
    }
    const sealed = await withOfferClaims(sessionId, claims.claims)
    if (!sealed) return { denied: 'the offer is no longer open' }
    return { code: await newCode(row, sessionId, sealed) }
  }

  /**
   * The offer's claims with this login's, sealed for the session. Kept with the request, not
   * written to the session: several wallets may log in on one offer, and only the one whose code
   * redeems the session has its holder's claims issued (grants/authorization-code.ts).
   */
  async function withOfferClaims(
    sessionId: string,
    claims: Record<string, Record<string, unknown>>,
  ): Promise<string | undefined> {
    const session = await sessions.get(sessionId)
    if (session?.status !== 'offered') return undefined
    const existing = offerClaims(deps.keys.sessionData, session)
    return deps.keys.sessionData.sealClaims(tenantId, sessionId, { ...existing, ...claims })
  }

  /** A wallet-initiated flow's own session, with the login's claims (sealed). */
  async function startSession(
    row: AuthorizationRequestRow,
    sessionId: string,
    credentialConfigurationIds: string[],
    claims: Record<string, Record<string, unknown>>,
  ) {
    await sessions.insert({
      id: sessionId,
      status: 'offered',
      credentialConfigurationIds,
      claimsEncrypted: deps.keys.sessionData.sealClaims(tenantId, sessionId, claims),
      // Never handed out: a wallet-initiated session redeems through its authorization code only.
      preAuthorizedCodeHash: codeHash(handle()),
      createdByClientId: `wallet:${row.clientId}`.slice(0, 200),
      expiresAt: new Date(deps.now().getTime() + SESSION_SECONDS * 1000),
    })
  }
}
