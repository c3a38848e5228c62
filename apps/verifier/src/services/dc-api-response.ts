import {
  type DcApiProtocol,
  formatSpec,
  ProtocolError,
  zDcApiProtocol,
} from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import {
  annexCRequest,
  formatRuntime,
  openAnnexCResponse,
  PresentationRejected,
} from '@credential-service/crypto'
import type { PresentationSessionRow } from '@credential-service/db-schema'
import {
  checkClaims,
  encryptionJwk,
  finishVerified,
  openSession,
  type PresentationBinding,
  readAuthorizationResponse,
  sessionEnding,
  verification,
  verifyVpToken,
} from '@credential-service/server-kit'
import type { VerifierDeps } from './request-object'

/** What the page posts: the DigitalCredential the browser returned (W3C Digital Credentials API). */
export interface DcApiAnswer {
  protocol: string
  data: Record<string, unknown>
}

/**
 * The answer of a `dc-api` request (OpenID4VP 1.0 Appendix A, checklist V-31, S-88): one per
 * request, in a protocol the request offered, bound to the page's origin: an SD-JWT VC's KB-JWT
 * `aud` is `origin:<origin>`, signed request or not (A.4, checklist V-35); an mdoc's
 * SessionTranscript is the `OpenID4VPDCAPIHandover` of the origin (B.2.6.2).
 */
export const handleDcApiResponse = traced('verifier dc-api response', handleDcApiResponseUntraced)

async function handleDcApiResponseUntraced(
  deps: VerifierDeps,
  tenantId: string,
  requestId: string,
  answer: DcApiAnswer,
) {
  const { row, now } = await openSession(deps, tenantId, requestId)
  const origin = row.origin
  if (origin === null)
    throw new ProtocolError('invalid_request', 'this request was not made for the Digital Credentials API')
  const { fail, refuse } = sessionEnding(deps, row, now)
  try {
    const protocol = offeredProtocol(row, answer.protocol)
    if (protocol === 'org-iso-mdoc') {
      const result = await verifyAnnexC(deps, row, origin, answer.data, now)
      if (!(await finishVerified(deps, row, result, now)))
        throw new ProtocolError('invalid_request', 'this request was answered already')
      return {}
    }
    const response = await readAuthorizationResponse(deps, row, answer.data, fail)
    if (!response) return {}
    const checked = await verification(deps, row, now)
    if (!checked)
      throw new ProtocolError('invalid_request', await fail('the presentation configuration is gone'))
    const result = await verifyVpToken(
      checked,
      row,
      response.vp_token,
      openid4vpBinding(deps, row, origin, protocol),
    )
    if (!(await finishVerified(deps, row, result, now)))
      throw new ProtocolError('invalid_request', 'this request was answered already')
    return {}
  } catch (error) {
    if (!(error instanceof PresentationRejected)) throw error
    throw await refuse(error)
  }
}

/** The answer's protocol, when the request offered it: an unsigned answer to a signed-only request is refused. */
function offeredProtocol(row: PresentationSessionRow, protocol: string): DcApiProtocol {
  const known = zDcApiProtocol.safeParse(protocol)
  if (!known.success || !row.dcApiProtocols?.includes(known.data))
    throw new PresentationRejected(
      `the answer's protocol '${protocol.slice(0, 100)}' was not offered (${row.dcApiProtocols?.join(', ')})`,
    )
  return known.data
}

/**
 * ISO/IEC 18013-7 Annex C: the HPKE-sealed DeviceResponse, opened with the request's key and the
 * `dcapi` SessionTranscript of the page's origin, then verified over that transcript; the query's
 * one mdoc credential (dcApiProtocolUnfit) gets the claims.
 */
async function verifyAnnexC(
  deps: VerifierDeps,
  row: PresentationSessionRow,
  origin: string,
  data: Record<string, unknown>,
  now: Date,
): Promise<Record<string, Record<string, unknown>[]>> {
  if (typeof data.response !== 'string')
    throw new PresentationRejected('an org-iso-mdoc answer holds its EncryptedResponse in data.response')
  const checked = await verification(deps, row, now)
  if (!checked) throw new PresentationRejected('the presentation configuration is gone')
  const query = checked.config.dcqlQuery.credentials[0]
  if (!query || !formatSpec(query.format).annexC || checked.config.dcqlQuery.credentials.length !== 1)
    throw new PresentationRejected('the configuration no longer asks for one mdoc')
  const publicJwk = encryptionJwk(deps, row)
  const { kid: _kid, alg: _alg, use: _use, ...recipientJwk } = publicJwk
  const { encryptionInfo } = await annexCRequest({
    credential: query,
    nonce: Buffer.from(row.nonce, 'base64url'),
    recipientJwk,
  })
  const opened = await openAnnexCResponse({
    response: data.response,
    encryptionInfo,
    origin,
    recipientPrivateJwk: deps.keys.cipher.decrypt(
      row.encryptionKey,
      `presentation:${row.tenantId}/${row.id}`,
    ),
  })
  const claims = await formatRuntime(query.format).verify({
    presentation: opened.deviceResponse,
    query,
    binding: {
      nonce: row.nonce,
      audiences: [],
      mdocTranscript: { kind: 'annex-c', sessionTranscript: opened.sessionTranscript },
      transactionData: row.transactionData,
    },
    trust: checked.trust,
  })
  checkClaims(query, claims)
  return { [query.id]: [claims] }
}

/**
 * A.4: the audience is the origin "even for signed requests". Wallets that read it as the client id
 * (as @openid4vc/openid4vp 0.4 does) are let in only with DC_API_SIGNED_CLIENT_ID_AUDIENCE.
 */
function openid4vpBinding(
  deps: VerifierDeps,
  row: PresentationSessionRow,
  origin: string,
  protocol: 'openid4vp-v1-signed' | 'openid4vp-v1-unsigned',
): PresentationBinding {
  const clientIdToo = protocol === 'openid4vp-v1-signed' && deps.dcApiSignedClientIdAudience
  return {
    audiences: clientIdToo ? [`origin:${origin}`, row.clientId] : [`origin:${origin}`],
    mdocTranscript: {
      kind: 'oid4vp-dc-api',
      origin,
      nonce: row.nonce,
      encryptionJwk: row.responseMode === 'direct_post.jwt' ? encryptionJwk(deps, row) : undefined,
    },
  }
}
