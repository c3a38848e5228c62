import {
  type AuthorizationRequestRepository,
  createAuthorizationRequestRepository,
  createIssuanceSessionRepository,
  type IssuanceSessionRepository,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { WalletClient } from '../services/client-attestation'
import type { DpopDeps } from '../services/dpop'

export type GrantDeps = ProtocolDeps & DpopDeps

/** One tenant's side of the token endpoint; built once per tenant (the repositories are stateless). */
export interface GrantScope {
  deps: GrantDeps
  tenantId: string
  /** The tenant's issuer identifier: `iss` and `aud` of its access tokens. */
  issuer: string
  sessions: IssuanceSessionRepository
  requests: AuthorizationRequestRepository
}

export function createGrantScope(deps: GrantDeps, tenantId: string): GrantScope {
  return {
    deps,
    tenantId,
    issuer: `${deps.publicUrl}/issuers/${tenantId}`,
    sessions: createIssuanceSessionRepository(deps.db, tenantId),
    requests: createAuthorizationRequestRepository(deps.db, tenantId),
  }
}

/** What a grant handler gets besides the parsed request: the tenant and what the sender proved. */
export interface GrantContext extends GrantScope {
  /** JWK thumbprint of the verified DPoP proof's key; undefined when no DPoP header was sent. */
  dpopJkt: string | undefined
  /** The wallet, when it authenticated with a wallet attestation (attest_jwt_client_auth). */
  walletClient: WalletClient | undefined
}
