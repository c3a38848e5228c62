import type { CredentialIssuerMetadata } from '@credential-service/core-domain'
import { federationKeyChainOf, type ProtocolDeps } from '@credential-service/server-kit'
import { authorizationServerMetadata } from './metadata'

/**
 * The issuer's federation metadata (OpenID Federation 1.0 §5): the credential issuer metadata it
 * publishes with the tenant's signing keys as `jwks` (§5.2.1), so that a party holding the chain
 * checks signed metadata and credentials without x5c, and its authorization server metadata. The
 * federation key chain is left out: it signs entity statements only.
 */
export async function issuerEntityMetadata(
  deps: Pick<ProtocolDeps, 'keys' | 'tenants'>,
  tenantId: string,
  metadata: CredentialIssuerMetadata,
  configs: Parameters<typeof authorizationServerMetadata>[1],
): Promise<Record<string, Record<string, unknown>>> {
  const { keys } = await deps.keys.jwks(tenantId, await federationKeyChainOf(deps.tenants, tenantId))
  return {
    openid_credential_issuer: { ...metadata, jwks: { keys: keys.map(({ x5c: _x5c, ...jwk }) => jwk) } },
    oauth_authorization_server: authorizationServerMetadata(metadata.credential_issuer, configs),
  }
}
