import { randomBytes } from 'node:crypto'
import type { CredentialConfig } from '@credential-service/core-domain'
import {
  type AuthorizationRequestRepository,
  createAuthorizationRequestRepository,
  createIssuanceSessionRepository,
  createPresentationSessionRepository,
  type IssuanceSessionRepository,
  type LoginProviderRow,
  type PresentationSessionRepository,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'

/** Time for the holder to log in (at the upstream provider, or by presenting): the request's and the cookie's. */
export const LOGIN_SECONDS = 600

/** A fresh single-use value: a request_uri, a login state, an authorization code. */
export const newHandle = () => randomBytes(32).toString('base64url')

/**
 * One tenant's side of the login wing (PAR, /authorize, the login kinds, code issuance); built once
 * per tenant, as the grants' GrantScope is (the repositories are stateless).
 */
export interface LoginScope extends TenantScope<ProtocolDeps> {
  requests: AuthorizationRequestRepository
  sessions: IssuanceSessionRepository
  /** A login provider as stored, from the tenant cache (a change is announced to every process). */
  loginProvider: (id: string) => Promise<LoginProviderRow | undefined>
  presentations: PresentationSessionRepository
  /** `Path` of the login cookie: the tenant's issuer path. */
  cookiePath: string
}

export function createLoginScope(scope: TenantScope<ProtocolDeps>): LoginScope {
  const { deps, tenantId } = scope
  return {
    ...scope,
    requests: createAuthorizationRequestRepository(deps.db, tenantId),
    sessions: createIssuanceSessionRepository(deps.db, tenantId),
    loginProvider: (id) => deps.tenants.loginProvider(tenantId, id),
    presentations: createPresentationSessionRepository(deps.db, tenantId),
    cookiePath: new URL(scope.issuerUrl).pathname,
  }
}

/** The tenant's configurations of `ids` (the cached set, in its order). */
export async function configsOf(scope: LoginScope, ids: string[]): Promise<CredentialConfig[]> {
  return (await scope.deps.tenants.credentialConfigs(scope.tenantId)).filter((c) => ids.includes(c.id))
}
