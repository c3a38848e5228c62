import { randomBytes } from 'node:crypto'
import { type CredentialConfig, ProtocolError } from '@credential-service/core-domain'
import { codeHash, signJws } from '@credential-service/crypto'
import { createIssuanceSessionRepository, type IssuanceSessionRow } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { jwtVerify } from 'jose'
import type { WalletClient } from './client-attestation'
import { createCodeGrants } from './code-grant'
import { type DpopDeps, type DpopRequest, dpopChallenge, verifyDpop } from './dpop'

export const ACCESS_TOKEN_SECONDS = 300
/** Guesses at an offer's transaction code before the offer is locked (OpenID4VCI 1.0 §13.6.3). */
export const TX_CODE_ATTEMPTS = 5
const TX_CODE_LOCKED = 'too many wrong transaction codes; the offer is locked'

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

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

/** What an access token is signed for. */
export interface AccessTokenGrant extends AccessGrant {
  clientId: string
  /** The wallet provider whose attestation authenticated the client. */
  walletProviderId?: string | undefined
}

/** A token request's parameters, as the route reads them from the form body. */
export interface TokenInput {
  grantType?: string | undefined
  /** The pre-authorized code. */
  code?: string | undefined
  txCode?: string | undefined
  /** Authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.5). */
  authorizationCode?: string | undefined
  redirectUri?: string | undefined
  codeVerifier?: string | undefined
  clientId?: string | undefined
  refreshToken?: string | undefined
  /** JWK thumbprint of the verified DPoP proof's key; undefined when no DPoP header was sent. */
  dpopJkt?: string | undefined
  /** The wallet, when it authenticated with a wallet attestation (attest_jwt_client_auth). */
  walletClient?: WalletClient | undefined
}

/** A request to a protected endpoint: its headers, method and public URL (for the DPoP proof). */
export type ResourceRequest = Omit<DpopRequest, 'accessToken' | 'at'>

export interface TokenResponse {
  access_token: string
  token_type: string
  expires_in: number
  authorization_details?: Record<string, unknown>[]
  refresh_token?: string
}

/** The authorization server side of one tenant's issuer: token endpoint and access tokens. */
export function createTokenService(deps: ProtocolDeps & DpopDeps, tenantId: string) {
  const issuer = `${deps.publicUrl}/issuers/${tenantId}`
  const sessions = createIssuanceSessionRepository(deps.db, tenantId)
  const config = (id: string) => deps.tenants.credentialConfig(tenantId, id)
  const codeGrants = createCodeGrants(deps, tenantId)

  return {
    /**
     * Token endpoint (OpenID4VCI §6, RFC 6749 §5): the pre-authorized code grant here, the
     * authorization code and refresh token grants in code-grant.ts.
     */
    async token(input: TokenInput): Promise<TokenResponse> {
      if (input.grantType === 'authorization_code' || input.grantType === 'refresh_token') {
        // Before the code is spent, as for a pre-authorized code: a refused wallet retries with it,
        // and the session does not read token_issued for a token never issued.
        const { authorizationCode } = input
        if (input.grantType === 'authorization_code' && authorizationCode)
          await requireSenderConstraints(input, () => codeGrants.configurationIdsOf(authorizationCode))
        // A refresh token's configurations are known once its grant is read: checked there, before
        // the token is spent.
        const grant = await codeGrants.token(input, (ids) => requireSenderConstraints(input, async () => ids))
        return {
          ...(await issueAccessToken({ ...grant, ...senderOf(input) })),
          ...(grant.authorizationDetails ? { authorization_details: grant.authorizationDetails } : {}),
          ...(grant.refreshToken ? { refresh_token: grant.refreshToken } : {}),
        }
      }
      if (input.grantType !== 'urn:ietf:params:oauth:grant-type:pre-authorized_code') {
        throw new ProtocolError('unsupported_grant_type', 'this grant type is not supported')
      }
      if (!input.code) throw new ProtocolError('invalid_request', 'pre-authorized_code is required')
      const now = deps.now()
      const hash = codeHash(input.code)
      // Configurations whose sender constraints this request lacks are left out of the one-statement
      // redemption; a code of such an offer is refused unspent, with the reason read on that path.
      const unconstrained = await unconstrainedConfigs(input)
      if (input.txCode && unconstrained.length > 0) {
        const offered = (await sessions.byCodeHash(hash))?.credentialConfigurationIds ?? []
        refuseUnconstrained(input, unconstrained, offered)
      }
      // An empty tx_code counts as none: RFC 6749 §3.2, a parameter without a value is omitted.
      const redeemed = input.txCode
        ? await redeemWithTxCode(hash, input.txCode, now)
        : ((await sessions.redeemByCode(
            hash,
            now,
            unconstrained.map((c) => c.id),
          )) ?? (await refuseRedemption(hash, false, now, { input, unconstrained })))
      const refreshToken = await codeGrants.preAuthorizedRefreshToken({
        sessionId: redeemed.id,
        configurationIds: redeemed.credentialConfigurationIds,
        clientId: input.clientId ?? input.walletClient?.clientId ?? '',
        dpopJkt: input.dpopJkt,
        attestedClientId: input.walletClient?.clientId,
      })
      return {
        ...(await issueAccessToken({
          sessionId: redeemed.id,
          configurationIds: redeemed.credentialConfigurationIds,
          clientId: input.walletClient?.clientId ?? 'wallet',
          ...senderOf(input),
        })),
        ...(refreshToken ? { refresh_token: refreshToken } : {}),
      }
    },

    /**
     * Verifies the access token of a protected endpoint: signed by a key of this tenant, for this
     * issuer, unexpired; a DPoP-bound token (`cnf.jkt`) only as `Authorization: DPoP` with a proof
     * of that key over this request and token (RFC 9449 §7). The scheme is case-insensitive.
     */
    async authorize(request: ResourceRequest): Promise<AccessGrant> {
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
        const proof = await verifyDpop(deps, tenantId, { ...request, accessToken, at: 'resource' })
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
    },
  }

  /** A signed access token (RFC 9068 `at+jwt`) for the session and its configurations. */
  async function issueAccessToken(grant: AccessTokenGrant) {
    const now = deps.now()
    const first = await config(grant.configurationIds[0] as string)
    const signer = await deps.keys.signer(tenantId, first?.keyChainId ?? '')
    const accessToken = await signJws(
      signer,
      { typ: 'at+jwt', kid: signer.kid },
      {
        iss: issuer,
        aud: issuer,
        sub: grant.sessionId,
        client_id: grant.clientId,
        iat: seconds(now),
        exp: seconds(now) + ACCESS_TOKEN_SECONDS,
        jti: randomBytes(16).toString('base64url'),
        credential_configuration_ids: grant.configurationIds,
        ...(grant.credentialIdentifiers ? { credential_identifiers: grant.credentialIdentifiers } : {}),
        ...(grant.walletProviderId ? { wallet_provider: grant.walletProviderId } : {}),
        ...(grant.dpopJkt ? { cnf: { jkt: grant.dpopJkt } } : {}),
      },
    )
    return {
      access_token: accessToken,
      token_type: grant.dpopJkt ? 'DPoP' : 'Bearer',
      expires_in: ACCESS_TOKEN_SECONDS,
    }
  }

  /** The sender constraints a token request proved: its DPoP key and attested wallet provider. */
  function senderOf(input: TokenInput) {
    return { dpopJkt: input.dpopJkt, walletProviderId: input.walletClient?.walletProviderId }
  }

  /**
   * Configurations with `dpop: required` or `walletAttestation: required` (HAIP §4, §4.4.1). For a
   * pre-authorized code they are checked before the code is redeemed, so a refused wallet can retry
   * with the same code. Only tenants that require either pay the read of the configurations asked for.
   */
  async function requireSenderConstraints(
    input: TokenInput,
    configurationIds: () => Promise<string[]>,
  ): Promise<void> {
    const unconstrained = await unconstrainedConfigs(input)
    if (unconstrained.length > 0) refuseUnconstrained(input, unconstrained, await configurationIds())
  }

  /** The tenant's configurations (cached) whose DPoP or attestation requirement `input` does not meet. */
  async function unconstrainedConfigs(input: TokenInput): Promise<CredentialConfig[]> {
    if (input.dpopJkt && input.walletClient) return []
    return (await deps.tenants.credentialConfigs(tenantId)).filter(
      (c) =>
        (!input.dpopJkt && c.dpop === 'required') ||
        (!input.walletClient && c.walletAttestation === 'required'),
    )
  }

  function refuseUnconstrained(input: TokenInput, unconstrained: CredentialConfig[], asked: string[]): void {
    for (const config of unconstrained.filter((c) => asked.includes(c.id))) {
      if (!input.dpopJkt && config.dpop === 'required')
        throw new ProtocolError(
          'invalid_dpop_proof',
          `'${config.id}' requires a DPoP proof at the token endpoint`,
        )
      if (!input.walletClient && config.walletAttestation === 'required')
        throw new ProtocolError(
          'invalid_client',
          `'${config.id}' requires wallet attestation client authentication`,
          {
            status: 401,
          },
        )
    }
  }

  /**
   * A token request with a transaction code (OpenID4VCI 1.0 §6.1, §13.6.3): one statement counts
   * the guess and judges it, so however many guesses arrive at once, at most TX_CODE_ATTEMPTS are
   * ever compared and the one that reaches the limit kills the code for every later caller.
   */
  async function redeemWithTxCode(hash: string, txCode: string, now: Date): Promise<IssuanceSessionRow> {
    const row = await sessions.redeemWithTxCode(hash, codeHash(txCode), TX_CODE_ATTEMPTS, now)
    if (!row) return refuseRedemption(hash, true, now)
    if (row.status === 'token_issued') return row
    throw new ProtocolError(
      'invalid_grant',
      row.status === 'failed' ? TX_CODE_LOCKED : 'the transaction code is wrong',
    )
  }

  /**
   * Why the one-statement redemption refused a token request (a read on the error path only):
   * S-33 asks for invalid_request when a tx_code is missing or sent to an offer without one, and
   * invalid_grant for a code that is unknown, used, expired or locked.
   */
  async function refuseRedemption(
    hash: string,
    txCodeSent: boolean,
    now: Date,
    left?: { input: TokenInput; unconstrained: CredentialConfig[] },
  ): Promise<never> {
    const row = await sessions.byCodeHash(hash)
    // Left out of the redemption for a sender constraint the request lacks (HAIP §4, §4.4.1).
    if (left && row) refuseUnconstrained(left.input, left.unconstrained, row.credentialConfigurationIds)
    if (row?.status === 'failed' && row.txCodeAttempts >= TX_CODE_ATTEMPTS) {
      throw new ProtocolError('invalid_grant', TX_CODE_LOCKED)
    }
    if (row?.status === 'offered' && row.expiresAt > now) {
      if (row.txCodeHash !== null && !txCodeSent)
        throw new ProtocolError('invalid_request', 'tx_code is required for this offer')
      if (row.txCodeHash === null && txCodeSent)
        throw new ProtocolError('invalid_request', 'this offer has no transaction code; send no tx_code')
    }
    throw new ProtocolError('invalid_grant', 'the pre-authorized code is invalid, expired or already used')
  }
}
