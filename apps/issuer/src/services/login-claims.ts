import {
  type CredentialConfig,
  claimPath,
  mapPresentedClaims,
  resolveClaims,
} from '@credential-service/core-domain'
import { selectClaims } from '@credential-service/crypto'
import { createAttributeProviderRepository } from '@credential-service/db-schema'
import { fetchAttributes, type ProtocolDeps } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'
import { type AuthenticatedUser, userClaims } from './upstream-login'

type Claims = Record<string, unknown>
const isObject = (value: unknown): value is Claims =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function setAt(target: Claims, path: string[], value: unknown) {
  let node = target
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {}
    node = node[key] as Claims
  }
  node[path[path.length - 1] as string] = value
}

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

/**
 * Who logged in: a user of an upstream OpenID provider, or the holder of a presented credential
 * (claims per DCQL credential query id, verified).
 */
export type HolderLogin =
  | { kind: 'openid'; user: AuthenticatedUser }
  | {
      kind: 'presentation'
      presentationConfigId: string
      presented: Record<string, Record<string, unknown>[]>
    }

/** `userAuthentication.claims`: field path joined by '.' → the login claim (or presented path) that fills it. */
export function mapLoginClaims(config: CredentialConfig, login: HolderLogin): Claims {
  const mapping = config.userAuthentication?.claims ?? {}
  if (login.kind === 'presentation')
    return mapPresentedClaims(config.fields, mapping, login.presented, selectClaims)
  const { user } = login
  const claims: Claims = {}
  for (const field of config.fields) {
    const path = claimPath(field)
    const source = mapping[path.join('.')]
    if (typeof source === 'string' && user.claims[source] !== undefined)
      setAt(claims, path, user.claims[source])
  }
  return claims
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
    let claims = mapLoginClaims(config, options.login)
    const provider = config.attributeProviderId ? await providers.row(config.attributeProviderId) : undefined
    if (provider) {
      const answer = await fetchAttributes(
        provider,
        {
          tenantId,
          sessionId: options.sessionId,
          credentialConfigurationId: config.id,
          ...holderOf(options.login),
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

/** What an attribute provider is told of the holder: the upstream user, or the presented credential. */
function holderOf(login: HolderLogin) {
  if (login.kind === 'presentation')
    return {
      presentation: { presentationConfigId: login.presentationConfigId, credentials: login.presented },
    }
  const { user } = login
  return { user: { issuer: user.issuer, sub: user.sub, claims: userClaims(user.claims) } }
}
