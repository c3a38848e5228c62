import type { CredentialConfig } from '@credential-service/core-domain'
import type { AuthServerRow } from '@credential-service/db-schema'
import type { JWTPayload } from 'jose'

/** What an external token authorises: configurations, and identifiers the server handed out. */
export interface TokenAuthorisation {
  configurationIds: string[]
  /** `credential_identifier` → configuration id (OpenID4VCI 1.0 §6.2), when the server gave any. */
  credentialIdentifiers?: Record<string, string>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The configurations a token names by the server's `mapping` (OpenID4VCI 1.0 §5.1.1
 * `authorization_details` of type `openid_credential`, §5.1.2 `scope`), kept to those the server
 * may authorise.
 */
export function tokenAuthorisation(
  server: AuthServerRow,
  claims: JWTPayload,
  configs: CredentialConfig[],
): TokenAuthorisation {
  const allowed = new Set(server.credentialConfigurationIds)
  const named = new Set<string>()
  const identifiers: Record<string, string> = {}
  if (server.mapping.includes('authorization_details') && Array.isArray(claims.authorization_details)) {
    for (const detail of claims.authorization_details) {
      if (!isRecord(detail) || detail.type !== 'openid_credential') continue
      const id = detail.credential_configuration_id
      if (typeof id !== 'string' || !allowed.has(id)) continue
      named.add(id)
      if (Array.isArray(detail.credential_identifiers))
        for (const identifier of detail.credential_identifiers)
          if (typeof identifier === 'string') identifiers[identifier] = id
    }
  }
  if (server.mapping.includes('scope') && typeof claims.scope === 'string') {
    const scopes = new Set(claims.scope.split(' '))
    for (const config of configs)
      if (allowed.has(config.id) && scopes.has(config.config.scope ?? config.id)) named.add(config.id)
  }
  return {
    configurationIds: [...named],
    ...(Object.keys(identifiers).length ? { credentialIdentifiers: identifiers } : {}),
  }
}

/** JWT and introspection members that are about the token, not its subject. */
const TOKEN_MEMBERS = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'client_id',
  'scope',
  'cnf',
  'authorization_details',
  'active',
  'token_type',
  'username',
  'issuer_state',
  'auth_time',
  'acr',
  'amr',
  'sid',
])

/** The subject's claims a token carries: its members besides the token's own. */
export function subjectClaims(claims: JWTPayload): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !TOKEN_MEMBERS.has(name)))
}
