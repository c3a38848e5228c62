import {
  type AuthorizationRequestRepository,
  createAuthorizationRequestRepository,
  createIssuanceSessionRepository,
  type IssuanceSessionRepository,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { WalletClient } from '../services/client-attestation'
import type { DpopDeps } from '../services/dpop'
import type { TenantScope } from '../tenant-scope'

export type GrantDeps = ProtocolDeps & DpopDeps

/** One tenant's side of the token endpoint; built once per tenant (the repositories are stateless). */
export interface GrantScope extends TenantScope<GrantDeps> {
  sessions: IssuanceSessionRepository
  requests: AuthorizationRequestRepository
}

export function createGrantScope(scope: TenantScope<GrantDeps>): GrantScope {
  return {
    ...scope,
    sessions: createIssuanceSessionRepository(scope.deps.db, scope.tenantId),
    requests: createAuthorizationRequestRepository(scope.deps.db, scope.tenantId),
  }
}

/** What a grant handler gets besides the parsed request: the tenant and what the sender proved. */
export interface GrantContext extends GrantScope {
  /** JWK thumbprint of the verified DPoP proof's key; undefined when no DPoP header was sent. */
  dpopJkt: string | undefined
  /** The wallet, when it authenticated with a wallet attestation (attest_jwt_client_auth). */
  walletClient: WalletClient | undefined
}
