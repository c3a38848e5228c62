import { randomBytes } from 'node:crypto'
import {
  type DcqlQuery,
  exceedsJsonDepth,
  MAX_JSON_DEPTH,
  type PresentationConfig,
  type PresentationResultEventBody,
  ProtocolError,
  safeParseAuthorizationResponse,
  safeParseEncryptedAuthorizationResponse,
  type VpTokenResponse,
} from '@credential-service/core-domain'
import { inSpan, traced } from '@credential-service/core-domain/tracing'
import {
  codeHash,
  type MdocTranscript,
  PresentationRejected,
  selectClaims,
  type TrustedListAnchors,
  verifyMdocPresentation,
  verifySdJwtPresentation,
} from '@credential-service/crypto'
import {
  createPresentationSessionRepository,
  type PresentationSessionRow,
  type TrustListRow,
} from '@credential-service/db-schema'
import { findUnstorable } from '@credential-service/server-kit'
import { compactDecrypt, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import { encryptionJwk, RESPONSE_ENC_VALUES, type VerifierDeps } from './request-object'
import { presentationTrust } from './status-list'
import { trustAnchors } from './trust'
import { etsiTrustedLists, trustListCertificates } from './trust-lists'

type Form = Record<string, unknown>

/**
 * Reads the authorization response (OpenID4VP §8.2, §8.3): plain form fields or a JWE `response`
 * (also the data of an OpenID4VP answer over the DC API, A.2).
 */
async function responseParameters(
  deps: VerifierDeps,
  row: PresentationSessionRow,
  form: Form,
): Promise<Form> {
  if (row.responseMode !== 'direct_post.jwt') return form
  const envelope = safeParseEncryptedAuthorizationResponse(form)
  if (!envelope.success) throw new PresentationRejected(envelope.error.detail)
  const jwe = envelope.data.response
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(jwe)
  } catch {
    throw new PresentationRejected('the response is not a JWE')
  }
  if (header.alg !== 'ECDH-ES' || !RESPONSE_ENC_VALUES.includes(String(header.enc))) {
    throw new PresentationRejected(
      `the response JWE uses ${String(header.alg)}/${String(header.enc)}, not ECDH-ES with A128GCM or A256GCM`,
    )
  }
  if (header.kid !== undefined && header.kid !== row.encryptionKid)
    throw new PresentationRejected('the response is encrypted to another key')
  const privateJwk = deps.keys.cipher.decrypt<JWK>(
    row.encryptionKey,
    `presentation:${row.tenantId}/${row.id}`,
  )
  let plaintext: Uint8Array
  try {
    plaintext = (await compactDecrypt(jwe, await importJWK({ ...privateJwk, alg: 'ECDH-ES' }, 'ECDH-ES')))
      .plaintext
  } catch {
    throw new PresentationRejected('the response could not be decrypted with this request’s key')
  }
  const params = parseWalletJson(new TextDecoder().decode(plaintext), 'the decrypted response')
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw new PresentationRejected('the decrypted response is not a JSON object')
  // The edge checks a plain form gets (NUL, lone surrogates), since reasons echo its values.
  const unstorable = findUnstorable(params, 'response')
  if (unstorable) throw new PresentationRejected(`${unstorable.path} ${unstorable.message}`)
  return params as Form
}

/**
 * JSON from the wallet, its depth checked before parsing (checklist S-123): what comes out is
 * walked recursively further on (String(), the disclosure checks), where 5,000 levels overflow
 * the stack.
 */
function parseWalletJson(text: string, name: string): unknown {
  if (exceedsJsonDepth(text))
    throw new PresentationRejected(`${name} nests deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    return JSON.parse(text)
  } catch {
    throw new PresentationRejected(`${name} is not JSON`)
  }
}

/**
 * Which credential queries must be answered (OpenID4VP §6.4.2): every required credential set
 * needs one option fully present; without credential_sets, every credential query is required.
 */
function checkCredentialSets(query: DcqlQuery, presented: Set<string>): void {
  const sets = query.credential_sets ?? [{ options: [query.credentials.map((c) => c.id)], required: true }]
  for (const set of sets) {
    if (set.required === false) continue
    if (!set.options.some((option) => option.every((id) => presented.has(id)))) {
      throw new PresentationRejected(
        `no option of a required credential set was presented (${set.options.map((o) => o.join('+')).join(' | ')})`,
      )
    }
  }
}

/** Requested claims present with allowed values, and one claim set satisfied (OpenID4VP §6.3, §6.4.1). */
export function checkClaims(
  credential: DcqlQuery['credentials'][number],
  claims: Record<string, unknown>,
): void {
  if (!credential.claims) return
  // A claim is there when its path selects something (§7.1); with `values`, one of the selected
  // values is one of them (§6.3).
  const satisfied = (claim: NonNullable<typeof credential.claims>[number]) => {
    const selected = selectClaims(claims, claim.path)
    if (selected === undefined) return false
    const { values } = claim
    return !values || selected.some((value) => values.some((allowed) => allowed === value))
  }
  if (!credential.claim_sets) {
    const missing = credential.claims.filter((claim) => !satisfied(claim))
    if (missing.length) {
      throw new PresentationRejected(
        `requested claims missing or not matching: ${missing.map((c) => JSON.stringify(c.path)).join(', ')}`,
      )
    }
    return
  }
  const byId = new Map(credential.claims.map((claim) => [claim.id, claim]))
  const ok = credential.claim_sets.some((set) =>
    set.every((id) => {
      const claim = byId.get(id)
      return claim !== undefined && satisfied(claim)
    }),
  )
  if (!ok) throw new PresentationRejected('no claim set of the query is satisfied')
}

type SessionOutcome = Parameters<ReturnType<typeof createPresentationSessionRepository>['finish']>[1]

type SessionFields = 'type' | 'tenantId' | 'sessionId' | 'presentationConfigId'
/** What a `presentation.result` body says about the outcome: its fields after the session's. */
type ResultFields = PresentationResultEventBody extends infer E
  ? E extends unknown
    ? Omit<E, SessionFields>
    : never
  : never

/**
 * Ends the pending session with its outcome and, in the same transaction, stores the webhook event
 * (`event`) in the outbox when the session has an endpoint subscribed to `presentation.result`.
 * With the tenant's `drop-after-delivery` retention, claims the webhook receives leave the session
 * (and the outbox) once delivered. False when another response ended the session first.
 */
async function finishSession(
  deps: VerifierDeps,
  row: PresentationSessionRow,
  outcome: SessionOutcome,
  event: ResultFields,
  now: Date,
): Promise<boolean> {
  const ended = await endSession(deps, row, outcome, event, now)
  if (ended) deps.metrics.presentationFinished(row.tenantId, outcome.status)
  return ended
}

async function endSession(
  deps: VerifierDeps,
  row: PresentationSessionRow,
  outcome: SessionOutcome,
  event: ResultFields,
  now: Date,
): Promise<boolean> {
  const sessions = createPresentationSessionRepository(deps.db, row.tenantId)
  const endpointId = row.webhookEndpointId
  if (!endpointId) return (await sessions.finish(row.id, outcome, now)) !== undefined
  // Read before the transaction: PGlite runs one statement at a time, outside ones would wait.
  const tenant = await deps.tenants.tenant(row.tenantId)
  // The outbox adds `deliveryId`; the field order is the body's (its bytes are signed as stored).
  const body: PresentationResultEventBody = {
    type: 'presentation.result',
    tenantId: row.tenantId,
    sessionId: row.id,
    presentationConfigId: row.presentationConfigId,
    ...event,
  }
  const finished = await deps.db.transaction(async (tx) => {
    if (!(await sessions.finish(row.id, outcome, now, tx))) return undefined
    const deliveryId = await deps.outbox.enqueue(tx, {
      tenantId: row.tenantId,
      endpointId,
      type: body.type,
      sessionId: row.id,
      dropSessionResult: tenant?.presentationRetention === 'drop-after-delivery' && 'claims' in event,
      body,
    })
    return { deliveryId }
  })
  if (finished?.deliveryId) void deps.outbox.kick([finished.deliveryId])
  return finished !== undefined
}

/** The pending session a response answers, or the refusal every response endpoint gives. */
export async function openSession(deps: VerifierDeps, tenantId: string, requestId: string) {
  const row = await createPresentationSessionRepository(deps.db, tenantId).byRequestId(requestId)
  const now = deps.now()
  if (row?.status !== 'pending' || row.expiresAt <= now) {
    throw new ProtocolError(
      'invalid_request',
      'no open request for this response (unknown, expired or already answered)',
    )
  }
  return { row, now }
}

/** How a response ends its session as failed: `fail` records the reason, `refuse` also makes the wallet's error. */
export function sessionEnding(deps: VerifierDeps, row: PresentationSessionRow, now: Date) {
  const fail = async (reason: string) => {
    const outcome = { status: 'failed', failureReason: reason } as const
    await finishSession(deps, row, outcome, outcome, now)
    return reason
  }
  /** Fails the session with the whole reason; the wallet may be told less (and the log has it all). */
  const refuse = async (error: PresentationRejected) => {
    await fail(error.message)
    return new ProtocolError('invalid_request', error.toWallet ?? error.message, { cause: error })
  }
  return { fail, refuse }
}

/** What a presentation must be bound to: the KB-JWT `aud` (SD-JWT VC) and the mdoc SessionTranscript. */
export interface PresentationBinding {
  audience: string
  mdocTranscript: MdocTranscript
}

/** The configuration and the trust its presentations are checked against. */
export async function verification(deps: VerifierDeps, row: PresentationSessionRow, now: Date) {
  const config = await deps.tenants.presentationConfig(row.tenantId, row.presentationConfigId)
  if (!config) return undefined
  const rows = await deps.tenants.trustLists(row.tenantId)
  const lists = trustListCertificates(rows, config.trustListIds, now)
  const trust = presentationTrust({
    anchors: trustAnchors(await deps.keys.keyChains(row.tenantId), lists.certificates),
    acceptAnyIssuer: config.acceptAnyIssuer,
    now,
    outbound: deps.outbound,
    statusLists: deps.statusLists,
  })
  return {
    config,
    trust: { ...trust, trustedLists: trustedListAnchors(rows, config, now) },
    unusableTrustLists: lists.unusable,
  }
}
/**
 * The configuration's ETSI trusted lists by URL, for `etsi_tl` queries (OpenID4VP 1.0 §6.1.1.2):
 * each list's current certificates as the anchors a matching chain validates to, or why it has none.
 */
function trustedListAnchors(
  rows: TrustListRow[],
  config: Pick<PresentationConfig, 'trustListIds'>,
  now: Date,
): Map<string, TrustedListAnchors> {
  const byUrl = new Map<string, TrustedListAnchors>()
  for (const list of etsiTrustedLists(rows, config.trustListIds, now)) {
    const anchors = trustAnchors([], list.certificates)
    const held = byUrl.get(list.url)
    // Two lists at one URL: the current one's certificates count.
    if (held && !held.unusable) held.anchors.push(...anchors)
    else byUrl.set(list.url, { anchors, unusable: list.unusable })
  }
  return byUrl
}

type Verification = NonNullable<Awaited<ReturnType<typeof verification>>>

/**
 * Verifies every presentation of a `vp_token` (OpenID4VP §8.1: each a string, an SD-JWT or a
 * base64url DeviceResponse) against the query and the binding; the claims per credential query id.
 */
export async function verifyVpToken(
  checked: Verification,
  row: PresentationSessionRow,
  vpToken: Record<string, string[]>,
  binding: PresentationBinding,
): Promise<Record<string, Record<string, unknown>[]>> {
  try {
    return await verifyEach(checked, row, vpToken, binding)
  } catch (error) {
    // A refusal while a named trust list is failing closed says so: the likely cause is the list.
    if (!(error instanceof PresentationRejected) || !checked.unusableTrustLists.length) throw error
    throw new PresentationRejected(
      `${error.message}; trust list(s) ${checked.unusableTrustLists.join(', ')} contribute no certificates (fail closed)`,
      error.toWallet,
    )
  }
}

async function verifyEach(
  { config, trust }: Verification,
  row: PresentationSessionRow,
  vpToken: Record<string, string[]>,
  binding: PresentationBinding,
): Promise<Record<string, Record<string, unknown>[]>> {
  const result: Record<string, Record<string, unknown>[]> = {}
  for (const [id, presentations] of Object.entries(vpToken)) {
    const query = config.dcqlQuery.credentials.find((credential) => credential.id === id)
    if (!query) throw new PresentationRejected(`vp_token has '${id}', which the query did not ask for`)
    if (presentations.length > 1 && !query.multiple)
      throw new PresentationRejected(
        `vp_token.${id} has ${presentations.length} presentations; one was asked for`,
      )
    const claimsOf = (presentation: string) =>
      query.format === 'mso_mdoc'
        ? verifyStep('mso_mdoc', () =>
            verifyMdocPresentation({
              presentation,
              docType: 'doctype_value' in query.meta ? query.meta.doctype_value : '',
              transcript: binding.mdocTranscript,
              trustedAuthorities: query.trusted_authorities,
              ...trust,
            }),
          )
        : verifyStep('dc+sd-jwt', () =>
            verifySdJwtPresentation({
              presentation,
              vctValues: 'vct_values' in query.meta ? query.meta.vct_values : [],
              nonce: row.nonce,
              clientId: binding.audience,
              transactionData: row.transactionData,
              requireHolderBinding: query.require_cryptographic_holder_binding !== false,
              trustedAuthorities: query.trusted_authorities,
              ...trust,
            }),
          )
    result[id] = []
    for (const presentation of presentations) {
      const claims = await claimsOf(presentation)
      checkClaims(query, claims)
      result[id].push(claims)
    }
  }
  checkCredentialSets(config.dcqlQuery, new Set(Object.keys(result)))
  return result
}

/**
 * Ends the session verified with its claims (sealed at rest). With `responseCode`, the result is
 * released only to the holder of the code (S-86: never to a webhook); false when another response
 * ended the session first.
 */
export async function finishVerified(
  deps: VerifierDeps,
  row: PresentationSessionRow,
  result: Record<string, Record<string, unknown>[]>,
  now: Date,
  responseCode?: string,
): Promise<boolean> {
  return finishSession(
    deps,
    row,
    {
      status: 'verified',
      resultEncrypted: deps.keys.sessionData.sealResult(row.tenantId, row.id, result),
      responseCodeHash: responseCode ? codeHash(responseCode) : null,
    },
    responseCode
      ? { status: 'verified', responseCodeRequired: true }
      : { status: 'verified', claims: result },
    now,
  )
}

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
      audience: row.clientId,
      mdocTranscript: {
        kind: 'oid4vp',
        clientId: row.clientId,
        nonce: row.nonce,
        responseUri: `${deps.publicUrl}/verifiers/${tenantId}/responses/${requestId}`,
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

/** A wallet's error response (§8.5) as the session's failure reason. */
const walletError = (response: { error: string; error_description?: string | undefined }) =>
  `wallet error: ${response.error}${response.error_description !== undefined ? ` (${response.error_description})` : ''}`

/**
 * The authorization response of a form or a DC API answer, read (decrypted when the mode asks) and
 * parsed once (core-domain): a malformed one fails the session with the reason and throws its
 * error; a wallet error (§8.5) fails the session and gives undefined, since the wallet gets a normal
 * answer. A PresentationRejected from decryption is the caller's to refuse.
 */
export async function readAuthorizationResponse(
  deps: VerifierDeps,
  row: PresentationSessionRow,
  form: Form,
  fail: (reason: string) => Promise<string>,
): Promise<VpTokenResponse | undefined> {
  const parsed = safeParseAuthorizationResponse(await responseParameters(deps, row, form))
  if (!parsed.success) {
    await fail(parsed.error.detail)
    throw parsed.error
  }
  const response = parsed.data
  if (typeof response.error === 'string') {
    await fail(walletError(response))
    return undefined
  }
  return response as VpTokenResponse
}

/** One presentation's verification by its format module, as a span of the response step. */
function verifyStep<T>(format: 'mso_mdoc' | 'dc+sd-jwt', verify: () => Promise<T>): Promise<T> {
  return inSpan('verifier verify presentation', verify, {
    attributes: () => ({ 'credential.format': format }),
  })
}
