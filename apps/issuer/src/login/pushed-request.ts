import { type CredentialConfig, type ParRequest, ProtocolError } from '@credential-service/core-domain'

/** A pushed authorization request as this issuer accepts it (RFC 9126, OpenID4VCI 1.0 §5.1). */
export interface PushedRequest {
  clientId: string
  redirectUri: string
  codeChallenge: string
  state: string | undefined
  issuerState: string | undefined
  dpopJkt: string | undefined
  /** Configurations named by a known scope (unknown scopes are ignored, I-35). */
  scopeConfigurationIds: string[]
  /** Configurations named by `authorization_details` of type openid_credential. */
  detailConfigurationIds: string[]
}

const invalid = (description: string) => new ProtocolError('invalid_request', description)

/**
 * What a parsed pushed authorization request asks of this issuer (RFC 9126 §2.1, OpenID4VCI 1.0
 * §5.1; the request's shape is core-domain's zParRequest): the configurations named by a known
 * scope (unknown scopes are ignored, I-35) and by authorization_details, which must all be known.
 */
export function pushedRequestOf(request: ParRequest, configs: CredentialConfig[]): PushedRequest {
  const scopes = new Set((request.scope ?? '').split(' ').filter(Boolean))
  const details = (request.authorization_details ?? []).map(({ credential_configuration_id: id }) => {
    if (!configs.some((c) => c.id === id))
      throw invalid('authorization_details names an unknown credential_configuration_id')
    return id
  })
  return {
    clientId: request.client_id,
    redirectUri: request.redirect_uri,
    codeChallenge: request.code_challenge,
    state: request.state,
    issuerState: request.issuer_state,
    dpopJkt: request.dpop_jkt,
    scopeConfigurationIds: configs.filter((c) => scopes.has(c.config.scope ?? c.id)).map((c) => c.id),
    detailConfigurationIds: [...new Set(details)],
  }
}

/**
 * The one login provider of the requested configurations (undefined when none logs its holder in).
 * One login fills every configuration's claims, so configurations of different providers are not
 * requested together.
 */
export function loginProviderOf(requested: CredentialConfig[]): string | undefined {
  const providers = new Set(requested.flatMap((c) => c.userAuthentication?.loginProviderId ?? []))
  if (providers.size > 1)
    throw new ProtocolError(
      'invalid_scope',
      'these credential configurations log the holder in at different login providers: request them separately',
    )
  return [...providers][0]
}

/**
 * What the requested configurations ask of a pushed request. Without an offer (no valid
 * issuer_state), each must log its holder in: nothing else vouches for the holder or fills the
 * claims, and the unregistered wallet's redirect_uri is used only after the holder logged in.
 * `walletAttestation: "required"` needs an attested client here as at the token endpoint (HAIP 4.3).
 */
export function checkRequested(
  requested: CredentialConfig[],
  request: { offered: boolean; attested: boolean },
): void {
  const withoutLogin = requested.filter((c) => !c.userAuthentication)
  if (!request.offered && withoutLogin.length > 0)
    throw new ProtocolError(
      'invalid_scope',
      `${withoutLogin.map((c) => `'${c.id}'`).join(', ')} can be requested only with the issuer_state of an offer`,
    )
  loginProviderOf(requested)
  const attested = requested.find((c) => c.walletAttestation === 'required')
  if (attested && !request.attested)
    throw new ProtocolError(
      'invalid_client',
      `'${attested.id}' requires wallet attestation client authentication`,
      { status: 401 },
    )
}
