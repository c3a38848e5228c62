import type { AccessTokenRequest, GrantType } from '@credential-service/core-domain'
import { inSpan } from '@credential-service/core-domain/tracing'
import { authorizationCodeGrant } from './authorization-code'
import type { GrantContext } from './grant-context'
import type { TokenResponse } from './issue-access-token'
import { preAuthorizedCodeGrant } from './pre-authorized-code'
import { refreshTokenGrant } from './refresh-token'

/** A grant: redeems its parsed token request for a token response, or throws a ProtocolError. */
export type GrantHandler<T extends GrantType> = (
  request: Extract<AccessTokenRequest, { grant_type: T }>,
  context: GrantContext,
) => Promise<TokenResponse>

/**
 * The grants of the token endpoint, by `grant_type` (the shape of node-oidc-provider's
 * `lib/actions/grants/`). A `grant_type` not listed here never parses: unsupported_grant_type.
 */
export const grants: { [T in GrantType]: GrantHandler<T> } = {
  'urn:ietf:params:oauth:grant-type:pre-authorized_code': preAuthorizedCodeGrant,
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
}

/** Token endpoint (OpenID4VCI 1.0 §6, RFC 6749 §5): the request's grant answers it. */
export function exchangeToken(request: AccessTokenRequest, context: GrantContext): Promise<TokenResponse> {
  // The request's own grant_type picked the handler, so the handler takes this request.
  const grant = grants[request.grant_type] as (
    request: AccessTokenRequest,
    context: GrantContext,
  ) => Promise<TokenResponse>
  return inSpan('issuer token', () => grant(request, context), {
    attributes: () => ({ 'oauth.grant_type': request.grant_type }),
  })
}
