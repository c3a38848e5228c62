import type { InteractionType, LoginProviderKind } from '@credential-service/core-domain'
import type { AuthorizationRequestRow, LoginProviderRow } from '@credential-service/db-schema'
import type { LoginScope } from './login-scope'
import type { HtmlAnswer } from './presentation-page'
import type { AuthorizationStep } from './wallet-redirect'

/** What /authorize answers the browser: a redirect, or a page of the login (200). */
export type LoginStart = AuthorizationStep | { page: HtmlAnswer; cookie: string }

/**
 * A kind of login provider: how the holder logs in (registered in registry.ts). Its file also
 * holds the endpoints that finish the login, and builds the HolderLogin (login-claims.ts) that
 * completeLogin takes.
 */
export interface LoginKind<K extends LoginProviderKind> {
  kind: K
  /**
   * /authorize: starts the login in this browser, bound to it by the login cookie (`browser`: the
   * cookie's value, when the browser sent one), or refuses (wallet-redirect.ts).
   */
  start(
    scope: LoginScope,
    row: AuthorizationRequestRow,
    provider: LoginProviderRow,
    browser: string | undefined,
  ): Promise<LoginStart>
  /** The Interactive Authorization interactions that can log this kind's holder in, preferred first. */
  interactions: readonly InteractionType[]
}
