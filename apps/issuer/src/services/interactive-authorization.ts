import {
  chooseFormInteraction,
  dcApiProtocolUnfit,
  IA_ERRORS,
  type IaInitialRequest,
  type IaOutcome,
  type IaPresentationRequest,
  type IaWireForm,
  iaAudiences,
  iaOrigin,
  missingFormInteraction,
  ProtocolError,
  REQUEST_URI_PREFIX,
  UpstreamUnavailableError,
} from '@credential-service/core-domain'
import { codeHash, PresentationRejected } from '@credential-service/crypto'
import type {
  AuthorizationRequestRow,
  NewAuthorizationRequest,
  PresentationSessionRow,
} from '@credential-service/db-schema'
import {
  createPresentationSession,
  dcApiRequests,
  encryptedResponseMode,
  encryptionJwk,
  finishSession,
  type PresentationBinding,
  type PresentationDeps,
  readAuthorizationResponse,
  sessionEnding,
  sessionFinished,
  verification,
  verifyVpToken,
} from '@credential-service/server-kit'
import {
  completeLogin,
  createLoginScope,
  issueCode,
  loginKindOf,
  loginProviderOf,
  newHandle,
  type PushSender,
  presentedHolder,
  pushedRequestRow,
} from '../login'
import type { TenantScope } from '../tenant-scope'

/**
 * How long the wallet has to present (the request row and the presentation session end together):
 * longer than a request_uri's minute, since the holder consents in the wallet.
 */
export const INTERACTION_SECONDS = 300

const invalidSession = (description: string) =>
  new ProtocolError(IA_ERRORS.invalidSession as 'invalid_session', description)

/**
 * Interactive Authorization of one tenant in one wire form (`form`): the Authorization Challenge
 * Endpoint of OpenID4VCI 1.1 (working copy 2d9fd4a, over FiPA -03 §5) or the earlier Interactive
 * Authorization Endpoint. The wire details are core-domain's (protocol/interactive-authorization*.ts);
 * this core decides an IaOutcome, which the form renders. The Initial Request is
 * stored as a pushed request (the same checks as PAR); a presentation provider's login is asked for
 * inline (an OpenID4VP request in the DC API form, answered to this endpoint), any other on the web
 * (the pushed request's request_uri at /authorize).
 */
export function createInteractiveAuthorizationService(
  scope: TenantScope<PresentationDeps>,
  form: IaWireForm,
) {
  const { deps, tenantId } = scope
  const endpoint = `${scope.issuerUrl}/${form.path}`
  // Scoped to the form: an auth_session is unknown at the other form's endpoint.
  const authSessionHash = (authSession: string) => codeHash(`${form.authSessionScope}${authSession}`)
  // The login wing does the rest: the pushed request, the holder's login, the code.
  const login = createLoginScope(scope)
  const { requests, loginProvider, presentations } = login

  /**
   * §"Initial Request": the pushed request, stored with the interaction the wallet supports in one
   * statement (a request refused here is not stored).
   */
  async function initial(request: IaInitialRequest, sender: PushSender): Promise<IaOutcome> {
    const { interaction_types_supported: supported, ...parameters } = request
    // No redirect_uri: none is bound to the code, and /token takes none (RFC 6749 §4.1.3).
    const pushed = await pushedRequestRow(
      login,
      { ...parameters, redirect_uri: parameters.redirect_uri ?? '' },
      sender,
    )
    const { row } = pushed
    const providerId = loginProviderOf(pushed.requested)
    if (!providerId) {
      // An offer's own claims stand for the holder: authorized as it is (FiPA §5.2.1).
      if (!row.sessionId) throw new ProtocolError('access_denied', 'no holder login is configured')
      return { kind: 'code', code: await issueCode(login, await requests.insert(row), row.sessionId) }
    }
    const provider = await loginProvider(providerId)
    if (!provider) throw new ProtocolError('access_denied', 'the login provider of this credential is gone')
    const { interactions } = loginKindOf(provider)
    const interaction = chooseFormInteraction(form, interactions, supported)
    if (!interaction || (interaction.kind === 'web' && !row.redirectUri)) {
      if (interaction)
        throw new ProtocolError('invalid_request', 'redirect_uri is required to continue on the web')
      throw missingFormInteraction(form, interactions)
    }
    const authSession = newHandle()
    if (interaction.kind === 'web') {
      await requests.insert({
        ...row,
        authSessionHash: authSessionHash(authSession),
        interactionType: 'web',
        presentationSessionId: null,
      })
      const expiresIn = Math.max(0, Math.round((row.expiresAt.getTime() - deps.now().getTime()) / 1000))
      return {
        kind: 'web',
        type: interaction.type,
        authSession,
        requestUri: `${REQUEST_URI_PREFIX}${pushed.requestUri}`,
        expiresIn,
      }
    }
    const openid4vpRequest = await presentationRequest(
      row,
      provider.presentationConfigId as string,
      authSession,
    )
    return { kind: 'presentation', type: interaction.type, authSession, openid4vpRequest }
  }

  /**
   * §"Require Presentation": a presentation session of the provider's configuration whose answer
   * comes here, and its request in the DC API form (OpenID4VP 1.0 A.2/A.3): signed (a request object
   * with `expected_origins` = [this endpoint's origin]) when the configuration's client id prefix
   * can sign, else unsigned; the form's `ia(e)_post` or `ia(e)_post.jwt` after the configuration's
   * response mode.
   */
  async function presentationRequest(
    row: NewAuthorizationRequest,
    presentationConfigId: string,
    authSession: string,
  ): Promise<Record<string, unknown>> {
    const config = await deps.tenants.presentationConfig(tenantId, presentationConfigId)
    if (!config)
      throw new ProtocolError('access_denied', 'the presentation configuration of this login is gone')
    const created = await createPresentationSession(deps, tenantId, {
      config,
      responseMode: config.responseMode,
      lifetimeSeconds: INTERACTION_SECONDS,
      webhookEndpointId: null,
      createdByClientId: `wallet:${row.clientId}`.slice(0, 200),
      responseUri: () => endpoint,
      // The request waits for this session's answer, reachable by the auth_session until the
      // session ends; it is tied to the session's nonce (§"Preventing Session Fixation Attacks").
      store: (session) =>
        requests.insertWithPresentation(
          {
            ...row,
            authSessionHash: authSessionHash(authSession),
            interactionType: 'presentation',
            presentationSessionId: session.id as string,
            expiresAt: session.expiresAt,
          },
          session,
        ),
    })
    const { session } = created
    const signed = dcApiProtocolUnfit('openid4vp-v1-signed', config) === undefined
    const [entry] = await dcApiRequests(deps, tenantId, config, {
      origin: iaOrigin(endpoint),
      protocols: [signed ? 'openid4vp-v1-signed' : 'openid4vp-v1-unsigned'],
      clientId: created.clientId,
      responseMode: form.responseModes[config.responseMode],
      nonce: session.nonce,
      encryptionJwk: encryptionJwk(deps, session),
      transactionData: null,
      expiresAt: session.expiresAt,
    })
    if (!entry) throw new ProtocolError('invalid_request', 'this request is no longer pending')
    return entry.data
  }

  /**
   * §"Require Presentation" answered (an Intermediate Request): the auth_session, taken once, from
   * the sender of the Initial Request (same DPoP key and attested client, when those were used), and
   * the OpenID4VP response bound to this endpoint (§"Interactive Authorization Binding"). The
   * presented claims log the holder in (completeLogin) and the code is the answer (FiPA §5.2.1).
   */
  async function presented(request: IaPresentationRequest, sender: PushSender): Promise<IaOutcome> {
    const hash = authSessionHash(request.auth_session)
    const now = deps.now()
    // §"Preventing Session Fixation Attacks" / "Preventing Forwarding": the follow-up comes from the
    // wallet that started the request (its DPoP key, its attested wallet instance); another
    // sender's follow-up leaves the auth_session to its owner.
    const taken = await requests.takeAuthSession(hash, now, {
      dpopJkt: sender.dpopJkt ?? null,
      attestationJkt: sender.walletClient?.instanceJkt ?? null,
    })
    if (!taken) throw await notTaken(hash, now, sender)
    const { row, presentation: session } = taken
    if (session?.status !== 'pending' || session.expiresAt <= now) {
      await requests.fail(row.id)
      throw invalidSession('the presentation of this auth_session is no longer open')
    }
    try {
      return await verified(row, session, request.openid4vp_response, now)
    } catch (error) {
      // A status list its server cannot give now is no verdict (S-135): the same follow-up may come again.
      if (error instanceof UpstreamUnavailableError) {
        await requests.releaseAuthSession(row.id)
        throw error
      }
      await requests.fail(row.id)
      const { refuse, fail } = sessionEnding(deps, session, now)
      if (error instanceof PresentationRejected) {
        const refused = await refuse(error)
        throw new ProtocolError('access_denied', refused.detail, { cause: error })
      }
      // A malformed response failed the session already; anything else fails it here.
      if ((await presentations.get(session.id))?.status === 'pending')
        await fail(error instanceof Error ? error.message : 'the presentation failed')
      throw error
    }
  }

  /** Why an auth_session could not be taken: read only on this refused path. */
  async function notTaken(hash: string, now: Date, sender: PushSender): Promise<ProtocolError> {
    const waiting = await requests.byAuthSession(hash, now)
    if (!waiting) return invalidSession('auth_session is unknown, expired or used')
    if (waiting.interactionType !== 'presentation')
      return new ProtocolError('invalid_request', 'this auth_session continues in the browser (request_uri)')
    if (waiting.dpopJkt && sender.dpopJkt !== waiting.dpopJkt)
      return new ProtocolError('invalid_dpop_proof', 'the Initial Request was bound to another DPoP key')
    // The same wallet instance (its attestation key), not only the same wallet product.
    if (waiting.attestationJkt && sender.walletClient?.instanceJkt !== waiting.attestationJkt)
      return new ProtocolError('invalid_client', 'the Initial Request was made by another attested wallet', {
        status: 401,
      })
    // Taken by a concurrent follow-up between the two statements.
    return invalidSession('auth_session is unknown, expired or used')
  }

  async function verified(
    row: AuthorizationRequestRow,
    session: PresentationSessionRow,
    form: Record<string, unknown>,
    now: Date,
  ): Promise<IaOutcome> {
    const { fail } = sessionEnding(deps, session, now)
    const response = await readAuthorizationResponse(deps, session, form, fail)
    if (!response)
      throw new ProtocolError('access_denied', 'the wallet answered the presentation with an error')
    const checked = await verification(deps, session, now)
    if (!checked) throw new PresentationRejected('the presentation configuration is gone')
    const presentedClaims = await verifyVpToken(checked, session, response.vp_token, binding(session))
    // The issuer's own session: no webhook, and the presented claims are not kept in it.
    const verifiedOutcome = { status: 'verified' } as const
    const answered = () => invalidSession('this presentation was answered already')
    const finish = async () => {
      if (!(await finishSession(deps, session, verifiedOutcome, { status: 'verified', claims: {} }, now)))
        throw answered()
    }
    // Without an offer, the statement that hands out the code verifies the session (only then).
    const folded = !row.sessionId
    if (!folded) await finish()
    const outcome = await completeLogin(
      login,
      row,
      presentedHolder(session.presentationConfigId, presentedClaims),
      folded ? { presentationSessionId: session.id, at: now, answered } : undefined,
    )
    if ('denied' in outcome) {
      // The presentation was verified; the holder it shows is refused.
      if (folded) await finish()
      throw new ProtocolError('access_denied', outcome.denied)
    }
    if (folded) sessionFinished(deps, session, verifiedOutcome)
    return { kind: 'code', code: outcome.code }
  }

  /**
   * §"Interactive Authorization (Endpoint) Binding": an SD-JWT VC's KB-JWT `aud` is the form's prefix
   * (`ia:`, `iae:`) + this endpoint's origin, or + its URL (iaAudiences says why both); an mdoc signs
   * the `OpenID4VCIIAEHandover` SessionTranscript of this endpoint's URL, the nonce and (`.jwt`
   * modes) the thumbprint of the response encryption key.
   */
  function binding(session: PresentationSessionRow): PresentationBinding {
    return {
      audiences: iaAudiences(form, endpoint),
      mdocTranscript: {
        kind: 'oid4vci-iae',
        endpoint,
        nonce: session.nonce,
        encryptionJwk: encryptedResponseMode(session.responseMode) ? encryptionJwk(deps, session) : undefined,
      },
    }
  }

  return { endpoint, initial, presented }
}
