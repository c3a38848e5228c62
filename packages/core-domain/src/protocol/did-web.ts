/**
 * The did:web identifier of a URL (did:web method §3.2): the host, its port's colon
 * percent-encoded, then each path segment after a colon; resolved at `<url>/did.json`.
 */
export function didWebOf(url: string): string {
  const parsed = new URL(url)
  const segments = parsed.pathname.split('/').filter(Boolean).map(encodeURIComponent)
  return ['did:web', encodeURIComponent(parsed.host), ...segments].join(':')
}

/** The tenant verifier's DID: its documents are served at `{PUBLIC_URL}/verifiers/{tenant}/did.json`. */
export const verifierDid = (publicUrl: string, tenantId: string) =>
  didWebOf(`${publicUrl}/verifiers/${tenantId}`)
