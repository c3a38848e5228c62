import { randomBytes, randomInt } from 'node:crypto'
import {
  buildCredentialOffer,
  ForbiddenError,
  type IssuanceSession,
  isOperator,
  NotFoundError,
  newId,
  type OfferCreate,
  type OfferCreated,
  offerGrantServers,
  type Principal,
  RuleViolationError,
  resolveClaims,
  type ValidationIssue,
} from '@credential-service/core-domain'
import { codeHash, type JwkCipher } from '@credential-service/crypto'
import {
  createIssuanceSessionRepository,
  type Database,
  type IssuanceSessionRow,
} from '@credential-service/db-schema'

import type { FlowMetrics, KeyRuntime, OutboundPolicy, TenantCache } from '@credential-service/server-kit'
import { rememberSessionKind } from './session-kinds'

export interface OfferServiceDeps {
  db: Database
  cipher: JwkCipher
  keys: KeyRuntime
  tenants: TenantCache
  outbound: OutboundPolicy
  publicUrl: string
  metrics: FlowMetrics
  now: () => Date
}

function generateTxCode(mode: 'numeric' | 'text', length: number): string {
  const alphabet = mode === 'numeric' ? '0123456789' : 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
  return Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('')
}

export function toIssuanceSession(row: IssuanceSessionRow, now: Date): IssuanceSession {
  const expired = row.status === 'offered' && row.expiresAt <= now
  const iso = (d: Date | null) => d?.toISOString() ?? null
  return {
    id: row.id,
    kind: 'issuance',
    status: (expired ? 'expired' : row.status) as IssuanceSession['status'],
    credentialConfigurationIds: row.credentialConfigurationIds,
    issuedConfigurationIds: row.issuedConfigurationIds,
    txCodeRequired: row.txCodeHash !== null,
    byReference: row.byReference,
    failureReason: row.failureReason,
    createdByClientId: row.createdByClientId,
    expiresAt: row.expiresAt.toISOString(),
    offerFetchedAt: iso(row.offerFetchedAt),
    tokenIssuedAt: iso(row.tokenIssuedAt),
    credentialIssuedAt: iso(row.credentialIssuedAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/**
 * A configuration with `userAuthentication` issues what the holder's login gives: a pre-authorized
 * code would issue without that login, and inline claims would be ignored by the issuer.
 */
function loginOfferIssues(input: OfferCreate, id: string, index: number): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  if (input.grant !== 'authorization_code')
    issues.push({
      path: 'body.grant',
      message: `configuration '${id}' (credentialConfigurationIds.${index}) logs the holder in: offer it with grant authorization_code`,
    })
  if (input.claims?.[id] !== undefined)
    issues.push({
      path: `body.claims.${id}`,
      message: `configuration '${id}' takes its claims from the holder's login (and its attribute provider); offers carry none for it`,
    })
  return issues
}

/** Credential offers (OpenID4VCI §4) and the sessions they start, for one tenant. */
export function createOfferService(deps: OfferServiceDeps, tenantId: string, actor: Principal) {
  const sessions = createIssuanceSessionRepository(deps.db, tenantId)
  const issuer = `${deps.publicUrl}/issuers/${tenantId}`

  /** Spec §5 rule 5: a client with a non-empty allowed list may offer only those configurations. */
  async function checkAllowed(ids: string[]) {
    if (isOperator(actor)) return
    const client = await deps.tenants.client(tenantId, actor.clientId)
    const allowed = client?.allowedIssuanceConfigs
    if (allowed?.length) {
      const refused = ids.filter((id) => !allowed.includes(id))
      if (refused.length) throw new ForbiddenError(`this client may not offer ${refused.join(', ')}`)
    }
  }

  return {
    async create(input: OfferCreate): Promise<OfferCreated> {
      if (!(await deps.tenants.tenant(tenantId))) throw new NotFoundError('tenant', tenantId)
      await checkAllowed(input.credentialConfigurationIds)
      const sessionId = newId('ses')
      const issues: ValidationIssue[] = Object.keys(input.claims ?? {})
        .filter((key) => !input.credentialConfigurationIds.includes(key))
        .map((key) => ({ path: `body.claims.${key}`, message: 'not one of credentialConfigurationIds' }))
      const claims: Record<string, Record<string, unknown>> = {}
      for (const [index, id] of input.credentialConfigurationIds.entries()) {
        const config = await deps.tenants.credentialConfig(tenantId, id)
        if (!config) {
          issues.push({
            path: `body.credentialConfigurationIds.${index}`,
            message: `no credential configuration '${id}'`,
          })
          continue
        }
        const supplied = input.claims?.[id]
        if (config.userAuthentication) {
          issues.push(...loginOfferIssues(input, id, index))
          continue
        }
        // Without inline claims, the attribute provider is asked at the credential request, when the
        // wallet is there; its answer is validated then.
        if (!supplied && config.attributeProviderId) continue
        const resolved = resolveClaims(config, supplied ?? {}, `body.claims.${id}`)
        if (resolved.ok) claims[id] = resolved.claims
        else issues.push(...resolved.issues)
      }
      const authServers = await deps.tenants.authServers(tenantId)
      const chosenServer = input.authorizationServerId
        ? authServers.find((server) => server.id === input.authorizationServerId)
        : undefined
      if (input.authorizationServerId && (!chosenServer || input.grant === 'pre-authorized_code'))
        issues.push({
          path: 'body.authorizationServerId',
          message: chosenServer
            ? 'an authorization server belongs to the authorization_code grant'
            : `no authorization server '${input.authorizationServerId}' in this tenant`,
        })
      // With both grants the wallet may take the authorization code flow, which asks for no tx code.
      if (input.txCode && input.grant !== 'pre-authorized_code')
        issues.push({
          path: 'body.txCode',
          message: 'a transaction code belongs to the pre-authorized code grant alone',
        })
      if (issues.length) throw new RuleViolationError('the offer cannot be made; see errors', issues)

      const now = deps.now()
      const code = randomBytes(32).toString('base64url')
      const preAuthorized = input.grant !== 'authorization_code'
      // OpenID4VCI §4.1.1: issuer_state binds the wallet's authorization request to this offer.
      const issuerState = input.grant === 'pre-authorized_code' ? null : randomBytes(32).toString('base64url')
      const txCode = input.txCode
        ? (input.txCode.value ?? generateTxCode(input.txCode.inputMode, input.txCode.length))
        : undefined
      const expiresAt = new Date(now.getTime() + input.lifetimeSeconds * 1000)
      const txCodeSpec =
        input.txCode && txCode
          ? {
              inputMode: input.txCode.inputMode,
              length: txCode.length,
              description: input.txCode.description,
            }
          : null
      await sessions.insert({
        id: sessionId,
        status: 'offered',
        credentialConfigurationIds: input.credentialConfigurationIds,
        claimsEncrypted: deps.keys.sessionData.sealClaims(tenantId, sessionId, claims),
        preAuthorizedCodeHash: codeHash(code),
        txCodeHash: txCode ? codeHash(txCode) : null,
        txCodeSpec,
        issuerStateHash: issuerState ? codeHash(issuerState) : null,
        byReference: input.byReference,
        offerCodeEncrypted: input.byReference
          ? deps.cipher.encrypt(
              issuerState
                ? {
                    code: preAuthorized ? code : null,
                    issuerState,
                    ...(chosenServer ? { authorizationServer: chosenServer.issuer } : {}),
                  }
                : code,
              `offer:${tenantId}/${sessionId}`,
            )
          : null,
        createdByClientId: actor.clientId,
        statusHandle: input.statusHandle ?? null,
        expiresAt,
      })
      const credentialOffer = buildCredentialOffer(
        issuer,
        input.credentialConfigurationIds,
        preAuthorized ? code : null,
        txCodeSpec,
        issuerState,
        offerGrantServers(issuer, authServers.length, chosenServer?.issuer),
      )
      const credentialOfferUri = input.byReference ? `${issuer}/offers/${sessionId}` : null
      const offerUri = credentialOfferUri
        ? `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(credentialOfferUri)}`
        : `openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(credentialOffer))}`
      deps.metrics.offerCreated(tenantId)
      rememberSessionKind(tenantId, sessionId, 'issuance')
      return {
        sessionId,
        credentialOffer,
        offerUri,
        credentialOfferUri,
        txCode: input.txCode && !input.txCode.value ? (txCode ?? null) : null,
        expiresAt: expiresAt.toISOString(),
      }
    },
  }
}
