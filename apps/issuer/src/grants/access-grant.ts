import { ProtocolError } from '@credential-service/core-domain'
import { type DpopDeps, type DpopRequest, dpopChallenge, verifyDpop } from '../services/dpop'
import type { TenantScope } from '../tenant-scope'

/** What a verified access token grants: the session and the configurations it may ask for. */
export interface AccessGrant {
  sessionId: string
  configurationIds: string[]
  /**
   * `credential_identifier` → configuration id, for configurations authorized with
   * authorization_details (OpenID4VCI §6.2); undefined when none were.
   */
  credentialIdentifiers?: Record<string, string>
  /** Binds the token to this DPoP key (`cnf.jkt`, RFC 9449 §6). */
  dpopJkt?: string | undefined
}

/** A request to a protected endpoint: its headers, method and public URL (for the DPoP proof). */
export type ResourceRequest = Omit<DpopRequest, 'accessToken' | 'at'>

export const dpopInvalidToken = (description: string) =>
  new ProtocolError('invalid_token', description, {
    status: 401,
    challenge: dpopChallenge('invalid_token', description),
  })

export const invalidToken = (description: string) =>
  new ProtocolError('invalid_token', description, {
    status: 401,
    challenge: `Bearer error="invalid_token", error_description="${description}"`,
  })

/** `invalid_token` in the challenge of the scheme the token came with. */
export const refusedToken = (scheme: 'DPoP' | 'Bearer', description: string) =>
  scheme === 'DPoP' ? dpopInvalidToken(description) : invalidToken(description)

/** The token of `Authorization` (RFC 6750 §2.1, RFC 9449 §7.1; the scheme is case-insensitive). */
export function presentedToken(request: ResourceRequest): { scheme: 'DPoP' | 'Bearer'; accessToken: string } {
  const authorization = request.headers.authorization
  const match = authorization ? /^(Bearer|DPoP)\s+(\S+)$/i.exec(authorization) : null
  if (!match?.[1] || !match[2]) {
    throw new ProtocolError('invalid_token', 'an access token is required', {
      status: 401,
      challenge: request.headers.dpop
        ? dpopChallenge('invalid_token', 'an access token is required')
        : 'Bearer',
    })
  }
  return { scheme: match[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', accessToken: match[2] }
}

/**
 * RFC 9449 §7: a DPoP-bound token (`cnf.jkt`) only as `Authorization: DPoP` with a proof of that
 * key over this request and token; an unbound one only as Bearer.
 */
export async function checkSender(
  scope: TenantScope<DpopDeps>,
  request: ResourceRequest,
  token: { scheme: 'DPoP' | 'Bearer'; accessToken: string; cnf: unknown },
): Promise<string | undefined> {
  const jkt = (token.cnf as { jkt?: unknown } | undefined)?.jkt
  if (typeof jkt === 'string') {
    // RFC 9449 §7.2: a bound token sent as a bearer token is refused.
    if (token.scheme !== 'DPoP')
      throw dpopInvalidToken('this access token is DPoP-bound; use the DPoP scheme')
    const proof = await verifyDpop(scope, { ...request, accessToken: token.accessToken, at: 'resource' })
    if (!proof) throw dpopInvalidToken('a DPoP proof is required with this access token')
    if (proof.jkt !== jkt)
      throw dpopInvalidToken('the DPoP proof key is not the key this access token is bound to')
    return jkt
  }
  if (token.scheme === 'DPoP')
    throw dpopInvalidToken('this access token is not DPoP-bound; use the Bearer scheme')
  return undefined
}
