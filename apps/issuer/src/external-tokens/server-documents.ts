import { UpstreamError } from '@credential-service/core-domain'
import { type OutboundPolicy, outboundFetch } from '@credential-service/server-kit'
import type { JSONWebKeySet } from 'jose'

const TIMEOUT_MS = 5000
/** How long a server's RFC 8414 metadata is kept before it is read again. */
const METADATA_SECONDS = 600
/** A JWKS is fetched again on an unknown `kid` at most this often (bound against a kid flood). */
export const JWKS_REFRESH_COOLDOWN_SECONDS = 30
/** And in any case after this long, so retired keys go. */
const JWKS_MAX_AGE_SECONDS = 600
/** Most servers (metadata, JWKS) one process keeps; cleared whole when full. */
const MAX_SERVERS = 1000

/** What the credential endpoint reads of an authorization server's metadata (RFC 8414 §2). */
export interface ServerMetadata {
  issuer: string
  jwks_uri?: string
  introspection_endpoint?: string
}

export interface ServerDocumentDeps {
  outbound: OutboundPolicy
  now: () => Date
}

async function getJson(
  url: string,
  name: string,
  deps: ServerDocumentDeps,
  init: Record<string, unknown> = {},
) {
  const response = await outboundFetch(
    url,
    { name, purpose: 'authorization-server', timeoutMs: TIMEOUT_MS, ...init },
    deps.outbound,
  )
  if (response.status < 200 || response.status >= 300)
    throw new UpstreamError(`${name} answered HTTP ${response.status}`)
  try {
    return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>
  } catch (cause) {
    throw new UpstreamError(`${name} did not answer JSON`, { cause })
  }
}

/** RFC 8414 §3.1: the well-known suffix goes between the host and the issuer's path. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer)
  const path = url.pathname.replace(/\/$/, '')
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    // OpenID Connect Discovery 1.0 §4 (RFC 8414 §5 allows it): what OpenID providers serve.
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
  ]
}

/**
 * A process's copies of the external servers' documents: RFC 8414 metadata (read again after
 * METADATA_SECONDS), and JWKS, fetched again on an unknown `kid` no more than once per
 * JWKS_REFRESH_COOLDOWN_SECONDS. One per issuer process, shared by its tenants (keyed by URL).
 */
export function createServerDocuments(deps: ServerDocumentDeps) {
  const metadata = new Map<string, { value: Promise<ServerMetadata>; at: number }>()
  const jwks = new Map<string, { value: Promise<JSONWebKeySet>; at: number }>()
  const seconds = () => deps.now().getTime() / 1000
  /** Seconds since `at`; a copy from the future (the clock went back) counts as old. */
  const ageOf = (at: number) => {
    const age = seconds() - at
    return age < 0 ? Number.POSITIVE_INFINITY : age
  }

  async function discover(issuer: string): Promise<ServerMetadata> {
    const name = `authorization server '${issuer}'`
    let lastError: unknown
    for (const url of metadataUrls(issuer)) {
      try {
        const document = await getJson(url, name, deps)
        // RFC 8414 §3.3: the document must be the configured issuer's, byte for byte.
        if (document.issuer !== issuer)
          throw new UpstreamError(`${name} published metadata for another issuer`)
        return document as unknown as ServerMetadata
      } catch (error) {
        lastError = error
      }
    }
    throw lastError
  }

  function cached<T>(
    map: Map<string, { value: Promise<T>; at: number }>,
    key: string,
    load: () => Promise<T>,
  ) {
    if (map.size >= MAX_SERVERS) map.clear()
    const entry = { value: load(), at: seconds() }
    // A failed read is not kept: the next request tries again.
    entry.value.catch(() => {
      if (map.get(key) === entry) map.delete(key)
    })
    map.set(key, entry)
    return entry.value
  }

  return {
    metadata(issuer: string): Promise<ServerMetadata> {
      const known = metadata.get(issuer)
      if (known && ageOf(known.at) < METADATA_SECONDS) return known.value
      return cached(metadata, issuer, () => discover(issuer))
    },

    /** The JWKS at `uri`; `refresh` asks for a new copy, given only after the cooldown. */
    jwks(uri: string, refresh = false): Promise<JSONWebKeySet> {
      const known = jwks.get(uri)
      const age = known ? ageOf(known.at) : Number.POSITIVE_INFINITY
      if (known && age < JWKS_MAX_AGE_SECONDS && (!refresh || age < JWKS_REFRESH_COOLDOWN_SECONDS))
        return known.value
      return cached(jwks, uri, async () => {
        const document = await getJson(uri, `the JWKS of '${uri}'`, deps)
        if (!Array.isArray(document.keys)) throw new UpstreamError(`the JWKS of '${uri}' has no keys`)
        return document as unknown as JSONWebKeySet
      })
    },

    /** RFC 7662 §2: POST the token with our client credentials (client_secret_basic). */
    introspect(endpoint: string, token: string, client: { id: string; secret: string | undefined }) {
      const basic = Buffer.from(
        `${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret ?? '')}`,
      ).toString('base64')
      return getJson(endpoint, `the introspection endpoint '${endpoint}'`, deps, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${basic}`,
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      })
    },
  }
}
export type ServerDocuments = ReturnType<typeof createServerDocuments>
