import { randomBytes } from 'node:crypto'
import { ACCESS_TOKEN_SECONDS } from '@credential-service/core-domain'
import { signJws } from '@credential-service/crypto'
import type { GrantContext, GrantScope } from './grant-context'
import type { AccessGrant } from './verify-access-token'

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** What an access token is signed for. */
export interface AccessTokenGrant extends AccessGrant {
  clientId: string
  /** The wallet provider whose attestation authenticated the client. */
  walletProviderId?: string | undefined
}

/** A successful token response (RFC 6749 §5.1, OpenID4VCI 1.0 §6.2). */
export interface TokenResponse {
  access_token: string
  token_type: string
  expires_in: number
  authorization_details?: Record<string, unknown>[]
  refresh_token?: string
}

/** The sender constraints a token request proved: its DPoP key and attested wallet provider. */
export function senderOf(context: GrantContext) {
  return { dpopJkt: context.dpopJkt, walletProviderId: context.walletClient?.walletProviderId }
}

/** A signed access token (RFC 9068 `at+jwt`) for the session and its configurations. */
export async function issueAccessToken(scope: GrantScope, grant: AccessTokenGrant): Promise<TokenResponse> {
  const { deps, tenantId, issuerUrl: issuer } = scope
  const now = deps.now()
  const first = await deps.tenants.credentialConfig(tenantId, grant.configurationIds[0] as string)
  const signer = await deps.keys.signer(tenantId, first?.keyChainId ?? '')
  const accessToken = await signJws(
    signer,
    { typ: 'at+jwt', kid: signer.kid },
    {
      iss: issuer,
      aud: issuer,
      sub: grant.sessionId,
      client_id: grant.clientId,
      iat: seconds(now),
      exp: seconds(now) + ACCESS_TOKEN_SECONDS,
      jti: randomBytes(16).toString('base64url'),
      credential_configuration_ids: grant.configurationIds,
      ...(grant.credentialIdentifiers ? { credential_identifiers: grant.credentialIdentifiers } : {}),
      ...(grant.walletProviderId ? { wallet_provider: grant.walletProviderId } : {}),
      ...(grant.dpopJkt ? { cnf: { jkt: grant.dpopJkt } } : {}),
    },
  )
  deps.log.info?.(
    { tenantId, sessionId: grant.sessionId, credentialConfigurationIds: grant.configurationIds },
    'token issued',
  )
  return {
    access_token: accessToken,
    token_type: grant.dpopJkt ? 'DPoP' : 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
  }
}
