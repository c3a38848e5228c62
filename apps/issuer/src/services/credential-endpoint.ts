import {
  type CredentialResponseEncryption,
  parseCredentialRequest,
  parseDeferredCredentialRequest,
} from '@credential-service/core-domain'
import type { AccessGrant, ResourceRequest } from '../grants/verify-access-token'
import type { TenantScope } from '../tenant-scope'
import {
  checkEncryptionPolicy,
  checkResponseEncryption,
  createCredentialEncryption,
  encryptResponse,
} from './credential-encryption'
import type { CredentialOutcome } from './deferred'
import { reportFailure } from './failed-event'
import { createIssuanceService, type IssuanceDeps } from './issuance'

/** An HTTP answer of the (deferred) credential endpoint: JSON, or a JWE when the wallet asked for one. */
export interface CredentialHttpAnswer {
  status: 200 | 202
  contentType: 'application/json' | 'application/jwt'
  payload: unknown
}

export interface CredentialHttpRequest {
  /** Headers, method and public URL: the access token and its DPoP proof (RFC 9449 §7). */
  resource: ResourceRequest
  contentType: string | undefined
  body: unknown
}

/**
 * The wire side of the credential and deferred credential endpoints (OpenID4VCI 1.0 §8, §9, §10):
 * access token, plain or encrypted request, the tenant's encryption policy, and the answer
 * encrypted to the key of this very request (§9.1: a deferred request brings its own). Errors are
 * thrown and never encrypted (§8.3.1.2).
 */
export function createCredentialEndpoint(scope: TenantScope<IssuanceDeps>) {
  const { deps, tenantId } = scope
  const issuance = createIssuanceService(scope)
  const encryption = createCredentialEncryption(scope)

  /**
   * Reads and parses the request (the message's schema, at this edge), then `handle`s it; a
   * refusal of a valid token's request is reported (`issuance.failed`, failed-event.ts).
   */
  async function answer<R extends { credential_response_encryption?: CredentialResponseEncryption }>(
    input: CredentialHttpRequest,
    parse: (body: Record<string, unknown>) => R,
    handle: (token: AccessGrant, request: R) => Promise<CredentialOutcome>,
  ): Promise<CredentialHttpAnswer> {
    const token = await issuance.authorize(input.resource)
    try {
      return await answerFor(token, input, parse, handle)
    } catch (error) {
      await reportFailure(scope, token, error)
      throw error
    }
  }

  async function answerFor<R extends { credential_response_encryption?: CredentialResponseEncryption }>(
    token: AccessGrant,
    input: CredentialHttpRequest,
    parse: (body: Record<string, unknown>) => R,
    handle: (token: AccessGrant, request: R) => Promise<CredentialOutcome>,
  ): Promise<CredentialHttpAnswer> {
    const read = await encryption.readRequest(input.contentType, input.body)
    const request = parse(read.body)
    const response = await checkResponseEncryption(request.credential_response_encryption)
    const tenant = await deps.tenants.tenant(tenantId)
    checkEncryptionPolicy({ required: tenant?.credentialEncryption === 'required', request: read, response })
    const outcome = await handle(token, request)
    if (!response) return { status: outcome.status, contentType: 'application/json', payload: outcome.body }
    return {
      status: outcome.status,
      contentType: 'application/jwt',
      payload: await encryptResponse(outcome.body, response),
    }
  }

  return {
    credential: (input: CredentialHttpRequest) => answer(input, parseCredentialRequest, issuance.credential),
    deferredCredential: (input: CredentialHttpRequest) =>
      answer(input, parseDeferredCredentialRequest, issuance.deferredCredential),
  }
}
