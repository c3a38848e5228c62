import type { Client, CredentialConfig, PresentationConfig, Tenant } from '@credential-service/core-domain'
import {
  type AuthServerRow,
  createAuthServerRepository,
  createClientRepository,
  createCredentialConfigRepository,
  createFederationRepository,
  createLoginProviderRepository,
  createPresentationConfigRepository,
  createRegistrarRepository,
  createTenantRepository,
  createTrustListRepository,
  type Database,
  type FederationMembershipRow,
  type LoginProviderRow,
  type RegistrationCertificateRow,
  type TrustListRow,
} from '@credential-service/db-schema'
import { createTenantMemo } from './tenant-memo'

export interface TenantSnapshot {
  tenant: Tenant | undefined
  /** Changes when the tenant id is deleted and created again; management tokens carry it. */
  generation: string | undefined
  credentialConfigs: CredentialConfig[]
  presentationConfigs: PresentationConfig[]
  /** The tenant's clients without secrets (allowed configuration lists). */
  clients: Client[]
  /** Trust lists with their held content (a refresh announces a change, so this follows it). */
  trustLists: TrustListRow[]
  /** Login providers as stored (client secrets sealed): the issuer reads one per holder login. */
  loginProviders: LoginProviderRow[]
  /** External authorization servers as stored (introspection secrets sealed). */
  authServers: AuthServerRow[]
  /** The registrar's certificates by presentation configuration id (`verifier_info`). */
  registrationCertificates: Map<string, RegistrationCertificateRow>
  /** The tenant's OpenID Federation membership, if its entities are federation entities. */
  federation: FederationMembershipRow | undefined
}

export interface TenantCacheOptions {
  db: Database
}

/**
 * A tenant's settings, configurations and clients, read once and shared by every request of the
 * process: each issuance and presentation step needs them, and they change rarely.
 */
export function createTenantCache(options: TenantCacheOptions) {
  const { db } = options
  const snapshots = createTenantMemo(async (tenantId): Promise<TenantSnapshot> => {
    const [
      found,
      credentialConfigs,
      presentationConfigs,
      clients,
      trustLists,
      loginProviders,
      registrationCertificates,
      authServers,
      federation,
    ] = await Promise.all([
      createTenantRepository(db).getWithGeneration(tenantId),
      createCredentialConfigRepository(db, tenantId).all(),
      createPresentationConfigRepository(db, tenantId).all(),
      createClientRepository(db, tenantId).all(),
      createTrustListRepository(db, tenantId).rows(),
      createLoginProviderRepository(db, tenantId).rows(),
      createRegistrarRepository(db, tenantId).registrationCertificates(),
      createAuthServerRepository(db, tenantId).rows(),
      createFederationRepository(db, tenantId).get(),
    ])
    return {
      tenant: found?.tenant,
      generation: found?.generation,
      credentialConfigs,
      presentationConfigs,
      clients,
      trustLists,
      loginProviders,
      registrationCertificates,
      authServers,
      federation,
    }
  })

  return {
    tenant: (tenantId: string) => snapshots.find(tenantId, (s) => s.tenant),
    /**
     * Whether `generation` is the tenant's current one. A mismatch is re-read once (rate-bound by
     * the memo): a tenant created again in another process may not have been announced here yet.
     */
    isCurrentGeneration: async (tenantId: string, generation: string) =>
      (await snapshots.find(tenantId, (s) => (s.generation === generation ? true : undefined))) === true,
    credentialConfigs: async (tenantId: string) => (await snapshots.get(tenantId)).credentialConfigs,
    credentialConfig: (tenantId: string, id: string) =>
      snapshots.find(tenantId, (s) => s.credentialConfigs.find((config) => config.id === id)),
    presentationConfig: (tenantId: string, id: string) =>
      snapshots.find(tenantId, (s) => s.presentationConfigs.find((config) => config.id === id)),
    trustLists: async (tenantId: string) => (await snapshots.get(tenantId)).trustLists,
    client: (tenantId: string, clientId: string) =>
      snapshots.find(tenantId, (s) => s.clients.find((client) => client.clientId === clientId)),
    loginProvider: (tenantId: string, id: string) =>
      snapshots.find(tenantId, (s) => s.loginProviders.find((provider) => provider.id === id)),
    /** The tenant's external authorization servers (OpenID4VCI 1.0 §12.2.4). */
    authServers: async (tenantId: string) => (await snapshots.get(tenantId)).authServers,
    registrationCertificate: async (tenantId: string, presentationConfigId: string) =>
      (await snapshots.get(tenantId)).registrationCertificates.get(presentationConfigId),
    /**
     * Most tenants are no federation members, and every token and key set check asks (the entity
     * key is kept out of them): a miss must not re-read the tenant as `find` does.
     */
    federation: async (tenantId: string) => (await snapshots.get(tenantId)).federation,
  }
}
export type TenantCache = ReturnType<typeof createTenantCache>
