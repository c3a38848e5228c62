import { UpstreamUnavailableError } from '@credential-service/core-domain'
import { z } from 'zod'

export interface ProviderDiscoveryOptions {
  /** OIDC: the issuer as clients and browsers know it. */
  issuer: string
  /** Where the service itself reaches the provider: OIDC_INTERNAL_ISSUER_URL, else `issuer`. */
  internalIssuer: string
  timeoutMs?: number
}

export interface ProviderEndpoints {
  /** Public token endpoint, for integrators, the Swagger UI and the console. */
  tokenEndpoint: string
  /** Public authorization endpoint, where the console sends the browser to sign in; undefined if none. */
  authorizationEndpoint: string | undefined
  /** JWKS URL as the service fetches it (moved to the internal issuer when that is set). */
  jwksUri: string
}

const zDiscovery = z.looseObject({
  issuer: z.string(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
  authorization_endpoint: z.url().optional(),
})

/**
 * A URL the provider published under its public issuer, reached through the internal one: the
 * same path below the issuer (or on the issuer's origin) on the internal issuer.
 */
export function toInternalUrl(url: string, issuer: string, internalIssuer: string): string {
  if (issuer === internalIssuer) return url
  const publicBase = issuer.replace(/\/$/, '')
  const internalBase = internalIssuer.replace(/\/$/, '')
  if (url === publicBase || url.startsWith(`${publicBase}/`))
    return internalBase + url.slice(publicBase.length)
  const target = new URL(url)
  if (target.origin !== new URL(issuer).origin) return url
  const internal = new URL(internalIssuer)
  return new URL(`${target.pathname}${target.search}`, internal.origin).toString()
}

/**
 * OpenID Connect Discovery 1.0 §4 of the provider, fetched once from the internal issuer and
 * kept; a failure is not kept, so the next request tries again.
 */
export function createProviderDiscovery(options: ProviderDiscoveryOptions) {
  const url = `${options.internalIssuer.replace(/\/$/, '')}/.well-known/openid-configuration`
  let known: Promise<ProviderEndpoints> | undefined

  async function load(): Promise<ProviderEndpoints> {
    let body: unknown
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      body = await response.json()
    } catch (cause) {
      throw new UpstreamUnavailableError('the identity provider (OIDC) cannot be reached', { cause })
    }
    const parsed = zDiscovery.safeParse(body)
    if (!parsed.success) {
      throw new UpstreamUnavailableError('the identity provider published no usable discovery document', {
        cause: parsed.error,
      })
    }
    return {
      tokenEndpoint: parsed.data.token_endpoint,
      authorizationEndpoint: parsed.data.authorization_endpoint,
      jwksUri: toInternalUrl(parsed.data.jwks_uri, options.issuer, options.internalIssuer),
    }
  }

  return {
    endpoints(): Promise<ProviderEndpoints> {
      if (!known) {
        known = load()
        known.catch(() => {
          known = undefined
        })
      }
      return known
    },
  }
}
export type ProviderDiscovery = ReturnType<typeof createProviderDiscovery>
