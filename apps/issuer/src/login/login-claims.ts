import { type CredentialConfig, resolveClaims } from '@credential-service/core-domain'
import { createAttributeProviderRepository } from '@credential-service/db-schema'
import { type AttributeRequest, fetchAttributes, type ProtocolDeps } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'

export type Claims = Record<string, unknown>
export const isObject = (value: unknown): value is Claims =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Where a session keeps a configuration's mapped login claims while its attribute provider is not
 * ready: not a configuration id (those start with a letter or digit), so never issued as such.
 */
export const pendingLoginKey = (configurationId: string) => `#login/${configurationId}`

/** Deep merge where `over` wins: the attribute provider's answer over the mapped login claims. */
export function mergeClaims(base: Claims, over: Claims): Claims {
  const out: Claims = { ...base }
  for (const [key, value] of Object.entries(over))
    out[key] = isObject(value) && isObject(out[key]) ? mergeClaims(out[key] as Claims, value) : value
  return out
}

/** What of a configuration its login claims mapping reads. */
export type MappedConfig = Pick<CredentialConfig, 'fields' | 'userAuthentication'>

/**
 * Who logged in, as their login kind knows them (openid.ts: the upstream user; presentation.ts: the
 * holder of the presented credentials), so that what follows a login is the same for every kind.
 */
export interface HolderLogin {
  /** A configuration's claims from this login, by its `userAuthentication.claims` mapping. */
  mappedClaims(config: MappedConfig): Claims
  /** The holder as an attribute provider is told of them (`user` or `presentation`). */
  holder: Pick<AttributeRequest, 'user' | 'presentation'>
}

export type LoginClaimsResult =
  | { ok: true; claims: Record<string, Record<string, unknown>> }
  | { ok: false; reason: string }

/**
 * The claims of each configuration that logs its holder in: the mapped login claims, overlaid
 * with the attribute provider's answer for this user (when the configuration has one), validated
 * against `fields` like offer claims.
 */
export async function loginClaims(
  scope: TenantScope<ProtocolDeps>,
  options: { sessionId: string; configs: CredentialConfig[]; login: HolderLogin },
): Promise<LoginClaimsResult> {
  const { deps, tenantId } = scope
  const out: Record<string, Record<string, unknown>> = {}
  const providers = createAttributeProviderRepository(deps.db, tenantId)
  for (const config of options.configs) {
    if (!config.userAuthentication) continue
    let claims = options.login.mappedClaims(config)
    const provider = config.attributeProviderId ? await providers.row(config.attributeProviderId) : undefined
    if (provider) {
      const answer = await fetchAttributes(
        provider,
        {
          tenantId,
          sessionId: options.sessionId,
          credentialConfigurationId: config.id,
          ...options.login.holder,
        },
        { cipher: deps.keys.cipher, outbound: deps.outbound },
      )
      // Not ready yet (HTTP 202): the login claims wait aside; the credential request asks the
      // provider again by session id, merges its answer over them, and defers until then (§9).
      if (answer.status === 'pending') {
        out[pendingLoginKey(config.id)] = claims
        continue
      }
      claims = mergeClaims(claims, answer.claims)
    }
    const resolved = resolveClaims(config, claims, 'claims')
    if (!resolved.ok) {
      return {
        ok: false,
        reason: `claims of '${config.id}' failed validation: ${resolved.issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      }
    }
    out[config.id] = resolved.claims
  }
  return { ok: true, claims: out }
}
