import type { Role } from '../roles'

/** What the identity provider must know of an API client so that its tokens carry it. */
export interface ProviderClient {
  clientId: string
  /** Tenant the tokens name; undefined for operator clients (spec §5 rule 3). */
  tenantId: string | undefined
  roles: readonly Role[]
}

/**
 * Client management in an external OpenID provider (spec §5.4, OIDC mode): confidential clients
 * with the client credentials grant whose access tokens carry the tenant and roles. The service
 * keeps its own client record (tenant, roles, allowed configuration lists); the provider holds the
 * secret. Failures to reach the provider throw `UpstreamUnavailableError`; refusals `UpstreamError`.
 */
export interface IdentityProviderAdmin {
  /**
   * Creates the client; `secret` is used when given, else the provider generates one. Throws
   * `ConflictError` when the provider already has a client with this id.
   */
  createClient(client: ProviderClient, secret?: string): Promise<{ clientSecret: string }>
  /** Sets tenant and roles of an existing client (a client missing in the provider is created). */
  updateClient(client: ProviderClient): Promise<void>
  /** Replaces the secret (by `secret`, else a provider-generated one); the old one stops working. */
  rotateSecret(clientId: string, secret?: string): Promise<{ clientSecret: string }>
  /** Deletes the client; a client the provider does not know counts as deleted. */
  deleteClient(clientId: string): Promise<void>
  /** Creates the client, or updates tenant, roles and secret of an existing one (the root client). */
  upsertClient(client: ProviderClient, secret: string): Promise<'created' | 'updated'>
}
