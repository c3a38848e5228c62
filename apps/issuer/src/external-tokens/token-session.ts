import { type CredentialConfig, newId, ProtocolError, resolveClaims } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import {
  type AuthServerRow,
  createAttributeProviderRepository,
  createExternalTokenSessionRepository,
  type IssuanceSessionRow,
} from '@credential-service/db-schema'
import { fetchAttributes, type ProtocolDeps } from '@credential-service/server-kit'
import type { JWTPayload } from 'jose'
import { mergeClaims, newHandle, pendingLoginKey } from '../login'
import type { TenantScope } from '../tenant-scope'
import { TokenRefused } from './check-token'
import { subjectClaims, type TokenAuthorisation } from './token-grant'

/** Lifetime of a session an external token starts (as a wallet-initiated flow's). */
const SESSION_SECONDS = 600

export interface TokenSessionInput {
  server: AuthServerRow
  key: string
  claims: JWTPayload
  authorisation: TokenAuthorisation
  configs: CredentialConfig[]
}

/**
 * The issuance session of an external token, with the configurations the token may ask for in it:
 * the one it was bound to before (a single-use token is refused then); else the offer its
 * `issuer_state` names (OpenID4VCI 1.0 §4.1.1: that offer's prepared claims, redeemed once); else
 * a new session whose claims come from the token or the attribute provider. The binding is one
 * statement on a unique key, so of two requests with one token, on any process, one binds it.
 */
export async function tokenSession(
  scope: TenantScope<ProtocolDeps>,
  input: TokenSessionInput,
): Promise<{ session: IssuanceSessionRow; configurationIds: string[] }> {
  const { deps, tenantId } = scope
  const sessions = createExternalTokenSessionRepository(deps.db, tenantId)
  const { server, key, authorisation } = input
  const again = async () => {
    const session = await sessions.sessionOf(key)
    if (session && server.singleUseTokens) throw new TokenRefused('this access token was used already')
    return session
  }
  const within = (session: IssuanceSessionRow) => ({
    session,
    configurationIds: authorisation.configurationIds.filter((id) =>
      session.credentialConfigurationIds.includes(id),
    ),
  })
  const known = await again()
  if (known) return within(known)
  const issuerState = input.claims.issuer_state
  if (typeof issuerState === 'string') {
    const bound = await sessions.bindOffer(codeHash(issuerState), key, deps.now())
    const session = bound ?? (await again())
    if (!session) throw new TokenRefused('the issuer_state of this access token names no open offer')
    return within(session)
  }
  if (!authorisation.configurationIds.length)
    throw new ProtocolError(
      'insufficient_scope',
      'this access token authorises no credential of this issuer',
      {
        status: 403,
      },
    )
  const sessionId = newId('ses')
  const claims = await claimsOf(scope, { ...input, sessionId })
  const started = await sessions.start(
    {
      id: sessionId,
      status: 'token_issued',
      credentialConfigurationIds: authorisation.configurationIds,
      claimsEncrypted: deps.keys.sessionData.sealClaims(tenantId, sessionId, claims),
      // Never handed out: this session redeems through its token only.
      preAuthorizedCodeHash: codeHash(newHandle()),
      createdByClientId: `auth-server:${server.id}`.slice(0, 200),
      tokenIssuedAt: deps.now(),
      expiresAt: new Date(deps.now().getTime() + SESSION_SECONDS * 1000),
    },
    key,
  )
  const session = started ?? (await again())
  if (!session) throw new TokenRefused('this access token was used already')
  return within(session)
}

/**
 * The claims of each authorised configuration: the token's (by the configuration's top-level
 * field names), or, with `claimsSource: attribute-provider`, the configuration's attribute
 * provider's answer for the token's subject over them; validated against `fields`.
 */
async function claimsOf(
  scope: TenantScope<ProtocolDeps>,
  input: TokenSessionInput & { sessionId: string },
): Promise<Record<string, Record<string, unknown>>> {
  const { deps, tenantId } = scope
  const providers = createAttributeProviderRepository(deps.db, tenantId)
  const fromToken = subjectClaims(input.claims)
  const out: Record<string, Record<string, unknown>> = {}
  for (const config of input.configs) {
    if (!input.authorisation.configurationIds.includes(config.id)) continue
    const names = new Set(config.fields.map((field) => field.namespace ?? field.path[0]))
    let claims = Object.fromEntries(Object.entries(fromToken).filter(([name]) => names.has(name)))
    const provider =
      input.server.claimsSource === 'attribute-provider' && config.attributeProviderId
        ? await providers.row(config.attributeProviderId)
        : undefined
    if (provider) {
      const answer = await fetchAttributes(
        provider,
        {
          tenantId,
          sessionId: input.sessionId,
          credentialConfigurationId: config.id,
          user: { issuer: input.server.issuer, sub: String(input.claims.sub ?? ''), claims: fromToken },
        },
        { cipher: deps.keys.cipher, outbound: deps.outbound },
      )
      // Not ready (HTTP 202): the credential request asks again by session id and defers (§9).
      if (answer.status === 'pending') {
        out[pendingLoginKey(config.id)] = claims
        continue
      }
      claims = mergeClaims(claims, answer.claims)
    }
    const resolved = resolveClaims(config, claims, 'claims')
    if (!resolved.ok)
      throw new ProtocolError(
        'credential_request_denied',
        `claims of '${config.id}' failed validation: ${resolved.issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      )
    out[config.id] = resolved.claims
  }
  return out
}
