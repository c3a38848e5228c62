import { ProtocolError } from '@credential-service/core-domain'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { jwtVerify } from 'jose'
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

const dpopInvalidToken = (description: string) =>
  new ProtocolError('invalid_token', description, {
    status: 401,
    challenge: dpopChallenge('invalid_token', description),
  })

export const invalidToken = (description: string) =>
  new ProtocolError('invalid_token', description, {
    status: 401,
    challenge: `Bearer error="invalid_token", error_description="${description}"`,
  })

/**
 * Verifies the access token of a protected endpoint: signed by a key of this tenant, for this
 * issuer, unexpired; a DPoP-bound token (`cnf.jkt`) only as `Authorization: DPoP` with a proof
 * of that key over this request and token (RFC 9449 §7). The scheme is case-insensitive.
 */
export async function verifyAccessToken(
  scope: TenantScope<ProtocolDeps & DpopDeps>,
  request: ResourceRequest,
): Promise<AccessGrant> {
  const { deps, tenantId } = scope
  const issuer = scope.issuerUrl
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
  const scheme = match[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer'
  const accessToken = match[2]
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
  try {
    payload = (
      await jwtVerify(accessToken, await deps.keys.verificationKeys(tenantId), {
        issuer,
        audience: issuer,
        typ: 'at+jwt',
        currentDate: deps.now(),
      })
    ).payload
  } catch (_cause) {
    throw scheme === 'DPoP'
      ? dpopInvalidToken('the access token is invalid or expired')
      : invalidToken('the access token is invalid or expired')
  }
  const jkt = (payload.cnf as { jkt?: unknown } | undefined)?.jkt
  if (typeof jkt === 'string') {
    // RFC 9449 §7.2: a bound token sent as a bearer token is refused.
    if (scheme !== 'DPoP') throw dpopInvalidToken('this access token is DPoP-bound; use the DPoP scheme')
    const proof = await verifyDpop(scope, { ...request, accessToken, at: 'resource' })
    if (!proof) throw dpopInvalidToken('a DPoP proof is required with this access token')
    if (proof.jkt !== jkt)
      throw dpopInvalidToken('the DPoP proof key is not the key this access token is bound to')
  } else if (scheme === 'DPoP') {
    throw dpopInvalidToken('this access token is not DPoP-bound; use the Bearer scheme')
  }
  return {
    sessionId: String(payload.sub),
    configurationIds: (payload.credential_configuration_ids as string[]) ?? [],
    ...(payload.credential_identifiers
      ? { credentialIdentifiers: payload.credential_identifiers as Record<string, string> }
      : {}),
    ...(typeof jkt === 'string' ? { dpopJkt: jkt } : {}),
  }
}
