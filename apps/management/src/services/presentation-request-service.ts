import {
  checkRedirectUri,
  ForbiddenError,
  formatSpec,
  isOperator,
  type PresentationRequestCreate,
  type PresentationRequestCreated,
  type PresentationSession,
  type Principal,
  RuleViolationError,
} from '@credential-service/core-domain'
import type { PresentationResult } from '@credential-service/crypto'
import { createWebhookEndpointRepository, type PresentationSessionRow } from '@credential-service/db-schema'
import {
  createPresentationSession,
  dcApiTransport,
  type PresentationRequestDeps,
} from '@credential-service/server-kit'
import { rememberSessionKind } from './session-kinds'

export type { PresentationRequestDeps }

/**
 * The session as the API shows it. `claims` are the decrypted result for single-session reads
 * (null in lists); never shown for a same-device session: those are released by the response code
 * alone (OpenID4VP §14.3).
 */
export function toPresentationSession(
  row: PresentationSessionRow,
  now: Date,
  claims: PresentationResult | null,
): PresentationSession {
  const iso = (d: Date | null) => d?.toISOString() ?? null
  const responseCodeRequired = row.responseCodeHash !== null
  return {
    id: row.id,
    kind: 'presentation',
    status: (row.status === 'pending' && row.expiresAt <= now
      ? 'expired'
      : row.status) as PresentationSession['status'],
    presentationConfigId: row.presentationConfigId,
    failureReason: row.failureReason,
    claims: responseCodeRequired ? null : claims,
    responseCodeRequired,
    delivery: {
      status: row.deliveryStatus as PresentationSession['delivery']['status'],
      attempts: row.deliveryAttempts,
      error: row.deliveryError,
    },
    createdByClientId: row.createdByClientId,
    expiresAt: row.expiresAt.toISOString(),
    requestFetchedAt: iso(row.requestFetchedAt),
    responseReceivedAt: iso(row.responseReceivedAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/**
 * OpenID4VP authorization requests (§5) of one tenant: a session with a fresh nonce, state,
 * request id and response encryption key, and the `openid4vp://` URI that points to the request.
 */
export function createPresentationRequestService(
  deps: PresentationRequestDeps,
  tenantId: string,
  actor: Principal,
) {
  return {
    async create(input: PresentationRequestCreate): Promise<PresentationRequestCreated> {
      const config = await deps.tenants.presentationConfig(tenantId, input.presentationConfigId)
      if (!config) {
        const message = `no presentation configuration '${input.presentationConfigId}'`
        throw new RuleViolationError(message, [{ path: 'body.presentationConfigId', message }])
      }
      if (!isOperator(actor)) {
        const allowed = (await deps.tenants.client(tenantId, actor.clientId))?.allowedPresentationConfigs
        if (allowed?.length && !allowed.includes(config.id))
          throw new ForbiddenError(`this client may not request '${config.id}'`)
      }
      // Transaction data hashes are checked only where the format's spec says so (SD-JWT VC key
      // binding); elsewhere (mdoc device-signed hashes) a request is refused rather than half-checked.
      const unchecked = config.dcqlQuery.credentials.filter((c) => !formatSpec(c.format).transactionData)
      const uncheckedIds = new Set(unchecked.map((c) => c.id))
      const refusedIds =
        input.transactionData?.flatMap((entry) =>
          entry.credential_ids.filter((id) => uncheckedIds.has(id)),
        ) ?? []
      if (refusedIds.length) {
        const formats = [...new Set(unchecked.filter((c) => refusedIds.includes(c.id)).map((c) => c.format))]
        const message = `transaction data for ${formats.join(', ')} credentials is not supported: ${refusedIds.join(', ')}`
        throw new RuleViolationError(message, [{ path: 'body.transactionData', message }])
      }
      const types = input.transactionData?.map((entry) => entry.type) ?? []
      const refused = types.filter((type) => !config.transactionDataTypes?.includes(type))
      if (refused.length) {
        const message = `transaction data types not allowed by the configuration: ${refused.join(', ')}`
        throw new RuleViolationError(message, [{ path: 'body.transactionData', message }])
      }
      // The wallet opens the redirect URI in the user's browser: https only, also for a
      // configuration saved before that rule (a stored `javascript:` URI never reaches a wallet).
      const redirectUri = input.redirectUri ?? config.redirectUri
      if (redirectUri !== undefined) {
        const path = input.redirectUri === undefined ? 'body.presentationConfigId' : 'body.redirectUri'
        const issues = checkRedirectUri(redirectUri, deps.outbound, path)
        if (issues.length) throw new RuleViolationError('the redirect URI is not allowed; see errors', issues)
      }
      const dcApi = input.transport === 'dc-api' ? dcApiTransport(deps, config, input) : undefined
      // An override must name an endpoint of this tenant (checklist S-105); another tenant's id
      // reads as missing.
      if (
        input.webhookEndpointId !== undefined &&
        !(await createWebhookEndpointRepository(deps.db, tenantId).row(input.webhookEndpointId))
      ) {
        const message = `no webhookEndpoint '${input.webhookEndpointId}' in this tenant`
        throw new RuleViolationError(message, [{ path: 'body.webhookEndpointId', message }])
      }
      const created = await createPresentationSession(deps, tenantId, {
        config,
        responseMode: input.responseMode ?? config.responseMode,
        lifetimeSeconds: input.lifetimeSeconds ?? config.lifetimeSeconds,
        redirectUri,
        dcApi,
        transactionData: input.transactionData,
        webhookEndpointId: input.webhookEndpointId ?? config.webhookEndpointId ?? null,
        createdByClientId: actor.clientId,
      })
      rememberSessionKind(tenantId, created.id, 'presentation')
      return {
        sessionId: created.id,
        clientId: created.clientId,
        requestUri: created.requestUri,
        requestUriMethod: created.requestUri ? 'post' : null,
        authorizationRequestUri: created.authorizationRequestUri,
        ...(created.dcApi ? { dcApi: created.dcApi } : {}),
        expiresAt: created.expiresAt.toISOString(),
      }
    },
  }
}
