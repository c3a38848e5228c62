/**
 * The login wing's public interface (OpenID4VCI 1.0 §5: PAR, /authorize, the holder's login, the
 * authorization code): what the routes, the Interactive Authorization service and the credential
 * request's claims use. Every other file of login/ is the wing's own (scripts/import-circles.test.ts
 * checks that nothing outside imports one).
 */
export { authorize } from './authorize'
export { completeLogin, type LoginOutcome } from './complete-login'
export { issueCode } from './issue-code'
export { type HolderLogin, mergeClaims, pendingLoginKey } from './login-claims'
export type { LoginStart } from './login-kind'
export { createLoginScope, type LoginScope, newHandle } from './login-scope'
export { openIdCallback } from './openid'
export { type PushSender, pushAuthorizationRequest, pushedRequestRow } from './par'
export { presentedHolder } from './presentation'
export { presentationReturn, presentationReturnPage, presentationStatus } from './presentation-finish'
export { loginProviderOf } from './pushed-request'
export { loginKindOf } from './registry'
export type { AuthorizationStep } from './wallet-redirect'
