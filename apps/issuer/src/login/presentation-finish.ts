import { DomainError, ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import type { AuthorizationRequestRow, PresentationSessionRow } from '@credential-service/db-schema'
import { presentationResult } from '@credential-service/server-kit'
import { completeLogin } from './complete-login'
import { loginBrowserOf } from './login-browser'
import type { LoginScope } from './login-scope'
import { presentationUrl, presentedHolder, titleOf } from './presentation'
import { failureClass, type HtmlAnswer, returnPage } from './presentation-page'
import { type AuthorizationStep, denied, toWallet } from './wallet-redirect'

/** What the presentation login page's poll learns (`redirect`: to the wallet, with a code or access_denied). */
export type PresentationStatus =
  | { status: 'pending' }
  | { status: 'done'; redirect: string }
  | { status: 'failed'; reason: string; redirect: string }

/**
 * The page's poll (bound to the login cookie): a verified cross-device session finishes the
 * login; a failed session of either kind, or an expired login, ends it with access_denied.
 */
export async function presentationStatus(
  scope: LoginScope,
  requestId: string | undefined,
  cookie: string | undefined,
): Promise<PresentationStatus> {
  const { row, browserHash } = await presentationLoginOf(scope, requestId, cookie)
  if (row.status !== 'authorizing') return { status: 'pending' }
  const { presentations } = scope
  const [crossDevice, sameDevice] = await Promise.all([
    presentations.get(row.presentationSessionId as string),
    presentations.get(row.sameDevicePresentationSessionId as string),
  ])
  if (crossDevice?.status === 'verified') {
    const step = await finishPresentation(scope, row, browserHash, () =>
      presentations.takeResult(crossDevice.id),
    )
    if (!step) return { status: 'pending' }
    const error = new URL(step.redirect).searchParams.get('error_description')
    return error
      ? { status: 'failed', reason: error, redirect: step.redirect }
      : { status: 'done', redirect: step.redirect }
  }
  const failed = [crossDevice, sameDevice].find((s) => s?.status === 'failed')
  const expired = row.expiresAt.getTime() <= scope.deps.now().getTime()
  if (failed || expired || !crossDevice || !sameDevice) {
    const reason = failed ? failureClass(failed.failureReason) : 'the request expired'
    const step = await presentationDenied(
      scope,
      row,
      browserHash,
      `the presentation was not accepted: ${reason}`,
    )
    return step ? { status: 'failed', reason, redirect: step.redirect } : { status: 'pending' }
  }
  return { status: 'pending' }
}

/** The same-device return page (the response code is in the fragment; the page posts it). */
export async function presentationReturnPage(scope: LoginScope, requestId: string): Promise<HtmlAnswer> {
  return returnPage(await titleOf(scope), `${presentationUrl(scope)}/return`, requestId)
}

/**
 * The same-device wallet's redirect, posted by the return page (OpenID4VP 1.0 §13.3): the
 * response code releases the same-device session's result once, and only from the browser that
 * holds this request's login cookie (§14.2, session fixation); anything else is refused without
 * a code.
 */
export async function presentationReturn(
  scope: LoginScope,
  requestId: string | undefined,
  responseCode: string | undefined,
  cookie: string | undefined,
): Promise<AuthorizationStep> {
  const { row, browserHash } = await presentationLoginOf(scope, requestId, cookie)
  const refusal = new ProtocolError(
    'invalid_request',
    'the response code is unknown, used or not of this login',
    {
      status: 403,
    },
  )
  if (row.status !== 'authorizing' || !responseCode) throw refusal
  const sessionId = row.sameDevicePresentationSessionId as string
  const released = await scope.presentations.releaseResult(sessionId, codeHash(responseCode))
  if (!released) throw refusal
  const step = await finishPresentation(scope, row, browserHash, async () => released)
  if (!step) throw refusal
  return step
}

/**
 * The holder presented: the request moves authorizing → logged_in in one conditional update (of
 * two browsers or processes, one goes on), then the result, taken out of the presentation
 * session, fills the claims and the code is issued (or the wallet is told access_denied).
 */
async function finishPresentation(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  browserHash: string,
  take: () => Promise<PresentationSessionRow | undefined>,
): Promise<AuthorizationStep | undefined> {
  const { deps } = scope
  const taken = await scope.requests.takePresentationLogin(row.id, browserHash, deps.now())
  if (!taken) return undefined
  const session = await take()
  const presented = session ? presentationResult(deps.keys.sessionData, session) : null
  if (!session || !presented) return denied(scope, taken, 'the presentation result is gone')
  try {
    const holder = presentedHolder(
      session.presentationConfigId,
      presented as Record<string, Record<string, unknown>[]>,
    )
    const outcome = await completeLogin(scope, taken, holder)
    return 'code' in outcome ? toWallet(scope, taken, outcome) : denied(scope, taken, outcome.denied)
  } catch (error) {
    deps.log.warn({ tenantId: scope.tenantId, err: error }, 'presentation login failed')
    return denied(scope, taken, error instanceof DomainError ? error.detail : 'the login failed')
  }
}

/** Ends a presentation login as refused (once: a conditional update first). */
async function presentationDenied(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  browserHash: string,
  reason: string,
) {
  const taken = await scope.requests.takePresentationLogin(row.id, browserHash, new Date(0))
  return taken ? denied(scope, taken, reason) : undefined
}

/** The open presentation login of this request in the browser holding its cookie, or a refusal. */
async function presentationLoginOf(
  scope: LoginScope,
  requestId: string | undefined,
  cookie: string | undefined,
) {
  const browser = loginBrowserOf(cookie)
  const row =
    browser && requestId ? await scope.requests.presentationLoginOf(requestId, codeHash(browser)) : undefined
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
