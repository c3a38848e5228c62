import { randomBytes } from 'node:crypto'
import {
  buildCredentialOffer,
  type CredentialConfig,
  DomainError,
  newId,
  ProtocolError,
  resolveClaims,
} from '@credential-service/core-domain'
import { codeHash, issueMdoc, issueSdJwtVc, signJws } from '@credential-service/crypto'
import {
  createAttributeProviderRepository,
  createIssuanceSessionRepository,
  createNonceRepository,
  createNotificationRepository,
  type IssuanceSessionRow,
} from '@credential-service/db-schema'
import { fetchAttributes, offerClaims, type ProtocolDeps } from '@credential-service/server-kit'
import { base64url, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose'
import { ACCEPTED_PROOF_ALGORITHMS } from './metadata'
import { parseCredentialRequest } from './parse-credential-request'
import { createStatusListService } from './status-lists'

export const ACCESS_TOKEN_SECONDS = 300
export const NONCE_SECONDS = 300
/** Guesses at an offer's transaction code before the offer is locked (OpenID4VCI 1.0 §13.6.3). */
export const TX_CODE_ATTEMPTS = 5
const TX_CODE_LOCKED = 'too many wrong transaction codes; the offer is locked'
/** How old a proof's `iat` may be, and how far in the future (clock skew). */
const PROOF_MAX_AGE_SECONDS = 300
const PROOF_MAX_SKEW_SECONDS = 60

export type IssuanceDeps = ProtocolDeps

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
/**
 * A configuration this session already issued (checklist S-27; the credential count of a
 * session is its batch). credential_request_denied, 400, "the Credential Request has not been
 * accepted" and the wallet should not retry (OpenID4VCI 1.0 §8.3.1.2). Not invalid_token: the
 * access token is still valid, since the wallet sends its Notification Request with the same
 * token after the credential (§11.1), and a 401 would tell the wallet to get a new token.
 */
const alreadyIssued = (configurationId: string) =>
  new ProtocolError('credential_request_denied', `'${configurationId}' was already issued in this session`)
const invalidToken = (description: string) =>
  new ProtocolError('invalid_token', description, {
    status: 401,
    challenge: `Bearer error="invalid_token", error_description="${description}"`,
  })

/** The OpenID4VCI endpoints of one tenant's credential issuer. */
export function createIssuanceService(deps: IssuanceDeps, tenantId: string) {
  const issuer = `${deps.publicUrl}/issuers/${tenantId}`
  const sessions = createIssuanceSessionRepository(deps.db, tenantId)
  const config = (id: string) => deps.tenants.credentialConfig(tenantId, id)
  const nonces = createNonceRepository(deps.db, tenantId)
  const notifications = createNotificationRepository(deps.db, tenantId)

  return {
    issuer,

    /** Offer by reference (OpenID4VCI §4.1.3): served while the offer is open, 404 after. */
    async offer(sessionId: string): Promise<Record<string, unknown> | undefined> {
      const row = await sessions.fetchOffer(sessionId, deps.now())
      if (!row?.offerCodeEncrypted) return undefined
      const code = deps.keys.cipher.decrypt<string>(row.offerCodeEncrypted, `offer:${tenantId}/${sessionId}`)
      return buildCredentialOffer(issuer, row.credentialConfigurationIds, code, row.txCodeSpec)
    },

    /** Token endpoint, pre-authorized code grant (OpenID4VCI §6, RFC 6749 §5). */
    async token(input: { grantType?: string; code?: string; txCode?: string }) {
      if (input.grantType !== 'urn:ietf:params:oauth:grant-type:pre-authorized_code') {
        throw new ProtocolError('unsupported_grant_type', 'only the pre-authorized code grant is supported')
      }
      if (!input.code) throw new ProtocolError('invalid_request', 'pre-authorized_code is required')
      const now = deps.now()
      const hash = codeHash(input.code)
      // An empty tx_code counts as none: RFC 6749 §3.2, a parameter without a value is omitted.
      const redeemed = input.txCode
        ? await redeemWithTxCode(hash, input.txCode, now)
        : ((await sessions.redeemByCode(hash, now)) ?? (await refuseRedemption(hash, false, now)))
      const first = await config(redeemed.credentialConfigurationIds[0] as string)
      const signer = await deps.keys.signer(tenantId, first?.keyChainId ?? '')
      const accessToken = await signJws(
        signer,
        { typ: 'at+jwt', kid: signer.kid },
        {
          iss: issuer,
          aud: issuer,
          sub: redeemed.id,
          client_id: 'wallet',
          iat: seconds(now),
          exp: seconds(now) + ACCESS_TOKEN_SECONDS,
          jti: randomBytes(16).toString('base64url'),
          credential_configuration_ids: redeemed.credentialConfigurationIds,
        },
      )
      return { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS }
    },

    /** Nonce endpoint (OpenID4VCI §7): a fresh single-use c_nonce. */
    async nonce() {
      const value = randomBytes(24).toString('base64url')
      await nonces.issue(value, new Date(deps.now().getTime() + NONCE_SECONDS * 1000))
      return { c_nonce: value }
    },

    /**
     * Notification endpoint (OpenID4VCI §11): records the wallet's event on the session and, in the
     * same transaction, stores it in the webhook outbox for the configuration's endpoint (when that
     * endpoint subscribes to `issuance.notification`); the outbox delivers it (signed, retried).
     */
    async notification(token: { sessionId: string }, body: Record<string, unknown>): Promise<void> {
      const events = ['credential_accepted', 'credential_failure', 'credential_deleted']
      if (typeof body.notification_id !== 'string')
        throw new ProtocolError('invalid_notification_request', 'notification_id is required')
      if (typeof body.event !== 'string' || !events.includes(body.event)) {
        throw new ProtocolError('invalid_notification_request', `event must be one of ${events.join(', ')}`)
      }
      const notificationId = body.notification_id
      const event = body.event
      const description = typeof body.event_description === 'string' ? body.event_description : undefined
      const now = deps.now()
      // Read before the transaction: PGlite runs one statement at a time, outside ones would wait.
      const configs = await deps.tenants.credentialConfigs(tenantId)
      const stored = await deps.db.transaction(async (tx) => {
        const row = await notifications.record(notificationId, token.sessionId, event, description, now, tx)
        if (!row)
          throw new ProtocolError('invalid_notification_id', 'unknown notification_id for this access token')
        const endpointId = configs.find((c) => c.id === row.credentialConfigurationId)?.webhookEndpointId
        const deliveryId = endpointId
          ? await deps.outbox.enqueue(tx, {
              tenantId,
              endpointId,
              type: 'issuance.notification',
              sessionId: token.sessionId,
              notificationId: row.id,
              body: {
                type: 'issuance.notification',
                tenantId,
                sessionId: token.sessionId,
                credentialConfigurationId: row.credentialConfigurationId,
                event,
                ...(description ? { eventDescription: description } : {}),
                at: now.toISOString(),
              },
            })
          : undefined
        if (!deliveryId)
          await notifications.delivered(row.id, { status: 'none', attempts: 0, lastError: null }, tx)
        return deliveryId !== undefined
      })
      if (stored) void deps.outbox.kick()
    },

    /** Verifies the access token: signed by a key of this tenant, for this issuer, unexpired. */
    async authorize(authorization: string | undefined) {
      const match = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization) : null
      if (!match?.[1]) {
        throw new ProtocolError('invalid_token', 'an access token is required', {
          status: 401,
          challenge: 'Bearer',
        })
      }
      try {
        const { payload } = await jwtVerify(match[1], await deps.keys.verificationKeys(tenantId), {
          issuer,
          audience: issuer,
          typ: 'at+jwt',
          currentDate: deps.now(),
        })
        return {
          sessionId: String(payload.sub),
          configurationIds: (payload.credential_configuration_ids as string[]) ?? [],
        }
      } catch (_cause) {
        throw invalidToken('the access token is invalid or expired')
      }
    },

    /** Credential endpoint (OpenID4VCI §8): one credential per proof key, up to the batch size. */
    async credential(
      token: { sessionId: string; configurationIds: string[] },
      body: Record<string, unknown>,
    ) {
      const session = await sessions.get(token.sessionId)
      // A completed session keeps its token (the notification endpoint takes it); each of its
      // configurations is then refused as already issued, below.
      if (!session || !['token_issued', 'credential_issued', 'completed'].includes(session.status)) {
        throw invalidToken('the session of this access token is not active')
      }
      const request = parseCredentialRequest(body)
      const configurationId = request.credentialConfigurationId
      if (!token.configurationIds.includes(configurationId)) {
        throw new ProtocolError(
          'unknown_credential_configuration',
          `'${configurationId}' was not offered in this session`,
        )
      }
      if (session.issuedConfigurationIds.includes(configurationId)) throw alreadyIssued(configurationId)
      const offered = await config(configurationId)
      if (!offered)
        throw new ProtocolError(
          'unknown_credential_configuration',
          `no credential configuration '${configurationId}'`,
        )
      const holderKeys = offered.keyBinding
        ? await verifyProofs(request.proofs, offered.batchSize)
        : [undefined]
      const signer = await deps.keys.signer(tenantId, offered.keyChainId)
      const now = deps.now()
      const expiresAt = new Date(now.getTime() + offered.lifetimeSeconds * 1000)
      const claims = await claimsFor(session, offered)
      // One status list entry per credential of the batch, each at its own random index.
      const statuses = offered.statusManagement
        ? await createStatusListService(deps, tenantId).allocate({
            keyChainId: offered.keyChainId,
            count: holderKeys.length,
            sessionId: session.id,
            credentialConfigurationId: configurationId,
            handle: session.statusHandle,
          })
        : []
      const issueOne = async (holderJwk: JWK | undefined, index: number): Promise<string> => {
        const status = statuses[index]
        if (offered.config.format === 'mso_mdoc') {
          if (!holderJwk)
            throw new ProtocolError('invalid_credential_request', 'mso_mdoc credentials need a holder key')
          const mdoc = await issueMdoc({
            signer,
            docType: offered.config.docType as string,
            namespaces: claims as Record<string, Record<string, unknown>>,
            deviceJwk: holderJwk,
            signedAt: now,
            validFrom: now,
            validUntil: expiresAt,
            fullDates: new Set(
              offered.fields.filter((f) => f.type === 'date').map((f) => `${f.namespace}/${f.path[0]}`),
            ),
            status,
          })
          return base64url.encode(mdoc)
        }
        return issueSdJwtVc({
          signer,
          issuer,
          vct: offered.config.vct as string,
          issuedAt: now,
          expiresAt,
          holderJwk,
          claims,
          disclosable: offered.fields.filter((f) => f.disclosable).map((f) => f.path),
          decoys: 2,
          status,
        })
      }
      const credentials = await Promise.all(
        holderKeys.map(async (key, index) => ({ credential: await issueOne(key, index) })),
      )
      const notificationId = newId('ntf')
      // A concurrent request for the same configuration may have recorded it since the read above:
      // its credentials then stay unsent (exactly one of the two gets any).
      if (!(await sessions.recordIssued(session.id, configurationId, notificationId, now)))
        throw alreadyIssued(configurationId)
      deps.metrics.credentialsIssued(tenantId, offered.config.format, credentials.length)
      return { credentials, notification_id: notificationId }
    },
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
  async function refuseRedemption(hash: string, txCodeSent: boolean, now: Date): Promise<never> {
    const row = await sessions.byCodeHash(hash)
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

  /**
   * Claims of one credential: the offer's, else the attribute provider's answer, validated against
   * the schema derived from `fields`. A provider failure fails the session and the request; no
   * credential is ever issued with claims that did not validate.
   */
  async function claimsFor(
    session: IssuanceSessionRow,
    config: CredentialConfig,
  ): Promise<Record<string, unknown>> {
    // The one decryption of a credential request.
    const inline = offerClaims(deps.keys.sessionData, session)[config.id]
    if (inline) return inline
    // A completed session's claims were dropped (data minimisation): every offered credential is out.
    if (session.status === 'completed') {
      throw new ProtocolError(
        'credential_request_denied',
        'every credential of this offer was issued already',
      )
    }
    const provider = config.attributeProviderId
      ? await createAttributeProviderRepository(deps.db, tenantId).row(config.attributeProviderId)
      : undefined
    let reason: string
    try {
      const supplied = provider
        ? await fetchAttributes(
            provider,
            { tenantId, sessionId: session.id, credentialConfigurationId: config.id },
            { cipher: deps.keys.cipher, outbound: deps.outbound },
          )
        : {}
      const resolved = resolveClaims(config, supplied, 'claims')
      if (resolved.ok) return resolved.claims
      reason = `claims of '${config.id}' failed validation: ${resolved.issues.map((i) => `${i.path} ${i.message}`).join('; ')}`
    } catch (error) {
      reason = error instanceof DomainError ? error.detail : 'the attribute provider failed'
      // The wallet sees the reason only; the operator needs the cause (refused address, timeout, …).
      deps.log.warn(
        { tenantId, attributeProviderId: config.attributeProviderId, sessionId: session.id, err: error },
        'attribute provider failed',
      )
    }
    await sessions.fail(session.id, reason)
    throw new ProtocolError('credential_request_denied', reason)
  }

  /**
   * `proofs.jwt` (OpenID4VCI §8.2.1, Appendix F.1): `typ` openid4vci-proof+jwt, an asymmetric
   * allowed alg, signed by the public `jwk` in its header, `aud` the issuer, a fresh `iat`, and a
   * `nonce` we issued, consumed once for the whole request. Returns the holder keys.
   */
  async function verifyProofs(
    proofTypes: Record<string, unknown> | undefined,
    batchSize: number,
  ): Promise<JWK[]> {
    const proofs = proofTypes?.jwt
    if (!Array.isArray(proofs) || proofs.length === 0 || !proofs.every((p) => typeof p === 'string')) {
      throw new ProtocolError('invalid_proof', 'proofs.jwt must be a non-empty array of JWTs')
    }
    if (proofs.length > batchSize)
      throw new ProtocolError('invalid_credential_request', `at most ${batchSize} proofs per request`)
    const now = seconds(deps.now())
    const keys: JWK[] = []
    let nonce: unknown
    for (const proof of proofs as string[]) {
      let header: ReturnType<typeof decodeProtectedHeader>
      try {
        header = decodeProtectedHeader(proof)
      } catch {
        throw new ProtocolError('invalid_proof', 'a proof is not a JWT')
      }
      if (header.typ !== 'openid4vci-proof+jwt')
        throw new ProtocolError('invalid_proof', 'proof typ must be openid4vci-proof+jwt')
      if (!(ACCEPTED_PROOF_ALGORITHMS as readonly string[]).includes(String(header.alg))) {
        throw new ProtocolError('invalid_proof', `proof alg ${String(header.alg)} is not allowed`)
      }
      // Appendix F.1: kid, jwk and x5c each "MUST NOT be present" alongside another of them.
      if (['kid', 'jwk', 'x5c'].filter((name) => header[name] !== undefined).length > 1)
        throw new ProtocolError('invalid_proof', 'the proof header names its key by one of kid, jwk or x5c')
      const jwk = header.jwk as JWK | undefined
      if (!jwk || jwk.d !== undefined)
        throw new ProtocolError('invalid_proof', 'the proof header needs the public jwk of the holder key')
      let payload: Record<string, unknown>
      try {
        const verified = await jwtVerify(proof, await importJWK(jwk, String(header.alg)), {
          audience: issuer,
          algorithms: [...ACCEPTED_PROOF_ALGORITHMS],
          typ: 'openid4vci-proof+jwt',
          currentDate: deps.now(),
        })
        payload = verified.payload
      } catch (cause) {
        throw new ProtocolError('invalid_proof', 'the proof signature, audience or lifetime is invalid', {
          cause,
        })
      }
      const iat = Number(payload.iat)
      if (!Number.isFinite(iat) || iat < now - PROOF_MAX_AGE_SECONDS || iat > now + PROOF_MAX_SKEW_SECONDS) {
        throw new ProtocolError('invalid_proof', 'the proof iat is missing or not fresh')
      }
      if (typeof payload.nonce !== 'string')
        throw new ProtocolError('invalid_nonce', 'the proof has no nonce')
      if (nonce !== undefined && payload.nonce !== nonce)
        throw new ProtocolError('invalid_proof', 'all proofs of a request use the same nonce')
      nonce = payload.nonce
      const { kty, crv, x, y } = jwk
      const publicJwk = JSON.parse(JSON.stringify({ kty, crv, x, y })) as JWK
      if (keys.some((k) => k.x === publicJwk.x && k.y === publicJwk.y))
        throw new ProtocolError('invalid_proof', 'two proofs use the same key')
      keys.push(publicJwk)
    }
    if (!(await nonces.consume(String(nonce), deps.now()))) {
      throw new ProtocolError('invalid_nonce', 'the nonce is unknown, expired or already used')
    }
    return keys
  }
}
