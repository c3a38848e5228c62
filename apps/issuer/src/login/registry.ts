import { LOGIN_PROVIDER_KINDS, type LoginProviderKind } from '@credential-service/core-domain'
import type { LoginProviderRow } from '@credential-service/db-schema'
import type { LoginKind } from './login-kind'
import { openIdLogin } from './openid'
import { presentationLogin } from './presentation'

/**
 * The login kinds, by login provider `kind` (as grants/registry.ts is by grant_type): a kind added
 * to LOGIN_PROVIDER_KINDS is a type error here until it has its file.
 */
export const loginKinds: { [K in LoginProviderKind]: LoginKind<K> } = {
  openid: openIdLogin,
  presentation: presentationLogin,
}

/** A provider row's kind (the table's CHECK allows only the listed kinds; the repository reads others as `openid`). */
export function loginKindOf(provider: LoginProviderRow): LoginKind<LoginProviderKind> {
  const kind = LOGIN_PROVIDER_KINDS.find((name) => name === provider.kind) ?? 'openid'
  return loginKinds[kind]
}
