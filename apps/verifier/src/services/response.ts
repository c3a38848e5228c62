import { randomBytes } from 'node:crypto'
import { ProtocolError, type VpTokenResponse } from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import { PresentationRejected } from '@credential-service/crypto'
import {
  encryptionJwk,
  finishVerified,
  openSession,
  readAuthorizationResponse,
  sessionEnding,
  verification,
  verifierResponseUri,
  verifyVpToken,
} from '@credential-service/server-kit'
import type { VerifierDeps } from './request-object'

type Form = Record<string, unknown>

/**
 * The response endpoint (OpenID4VP §8.2): accepts one response per request, validates it and ends
 * the session verified or failed with the reason. Same-device requests get a `redirect_uri` with a
 * fresh `response_code` (§13.3).
 */
export const handleResponse = traced('verifier response', handleResponseUntraced)

async function handleResponseUntraced(deps: VerifierDeps, tenantId: string, requestId: string, form: Form) {
  const { row, now } = await openSession(deps, tenantId, requestId)
  const { fail, refuse } = sessionEnding(deps, row, now)
  let response: VpTokenResponse | undefined
  try {
    response = await readAuthorizationResponse(deps, row, form, fail)
  } catch (error) {
    if (!(error instanceof PresentationRejected)) throw error
    throw await refuse(error)
  }
  if (!response) return {}
  if (response.state !== row.state)
    throw new ProtocolError('invalid_request', await fail('the state does not match this request'))

  const checked = await verification(deps, row, now)
  if (!checked)
    throw new ProtocolError('invalid_request', await fail('the presentation configuration is gone'))
  try {
    const result = await verifyVpToken(checked, row, response.vp_token, {
      audiences: [row.clientId],
      mdocTranscript: {
        kind: 'oid4vp',
        clientId: row.clientId,
        nonce: row.nonce,
        responseUri: verifierResponseUri(deps.publicUrl, tenantId, requestId),
        encryptionJwk: row.responseMode === 'direct_post.jwt' ? encryptionJwk(deps, row) : undefined,
      },
    })
    const responseCode = row.redirectUri ? randomBytes(32).toString('base64url') : undefined
    if (!(await finishVerified(deps, row, result, now, responseCode)))
      throw new ProtocolError('invalid_request', 'this request was answered already')
    return responseCode ? { redirect_uri: `${row.redirectUri}#response_code=${responseCode}` } : {}
  } catch (error) {
    if (!(error instanceof PresentationRejected)) throw error
    throw await refuse(error)
  }
}
