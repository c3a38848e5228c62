import type { AuthorizationRequestRow } from '@credential-service/db-schema'
import type { GrantContext, GrantScope } from './grant-context'
import { type AccessTokenGrant, issueAccessToken, senderOf, type TokenResponse } from './issue-access-token'

/** What the authorization code and refresh token grants add to the access token. */
export interface AuthorizedGrant extends AccessTokenGrant {
  authorizationDetails?: Record<string, unknown>[]
  refreshToken?: string
}

/** OpenID4VCI §6.2: one credential identifier per configuration asked for by authorization_details. */
export function grantOf(row: AuthorizationRequestRow, refreshToken: string | undefined): AuthorizedGrant {
  const details = row.detailConfigurationIds
  return {
    sessionId: row.sessionId as string,
    configurationIds: row.credentialConfigurationIds,
    // An anonymous pre-authorized wallet's tokens name 'wallet', as its first access token did.
    clientId: row.clientId || 'wallet',
    ...(details.length
      ? {
          // The configuration id is the identifier: stable across refreshes, one credential each.
          credentialIdentifiers: Object.fromEntries(details.map((id) => [id, id])),
          authorizationDetails: details.map((id) => ({
            type: 'openid_credential',
            credential_configuration_id: id,
            credential_identifiers: [id],
          })),
        }
      : {}),
    ...(refreshToken ? { refreshToken } : {}),
  }
}

/** The token response of an authorization code or refresh token grant. */
export async function respondWithGrant(
  context: GrantContext,
  grant: AuthorizedGrant,
): Promise<TokenResponse> {
  return {
    ...(await issueAccessToken(context, { ...grant, ...senderOf(context) })),
    ...(grant.authorizationDetails ? { authorization_details: grant.authorizationDetails } : {}),
    ...(grant.refreshToken ? { refresh_token: grant.refreshToken } : {}),
  }
}

/**
 * BCP 4.5, 4.14.2 (S-35): a code or refresh token presented twice revokes its grant, and the
 * session's tokens with it; `from` limits which session statuses fail.
 */
export async function revokeGrant(
  scope: GrantScope,
  row: AuthorizationRequestRow,
  reason: string,
  from?: string[],
): Promise<void> {
  await scope.requests.revoke(row.id)
  if (row.sessionId) await scope.sessions.fail(row.sessionId, reason, from)
}
