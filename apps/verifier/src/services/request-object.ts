import { type PresentationConfig, ProtocolError, type RequestObject } from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import { canonicalHash, isSelfSigned, publicPart, signJws } from '@credential-service/crypto'
import {
  createPresentationSessionRepository,
  type PresentationSessionRow,
  type RegistrationCertificateRow,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { JWK } from 'jose'
import type { StatusLists } from './status-list'

export interface VerifierDeps extends ProtocolDeps {
  /** The process's cache of status lists (one per verifier app). */
  statusLists: StatusLists
  /** A tenant's registration certificates by presentation configuration, read once per change. */
  registrationCertificates: (tenantId: string) => Promise<Map<string, RegistrationCertificateRow>>
}

/**
 * Formats and algorithms we verify (OpenID4VP 1.0 §11.1, checklist V-09). B.3.4 asks for fully
 * specified JOSE names (RFC 9864): `Ed25519`, never the polymorphic `EdDSA` (we still verify a JWS
 * that says `EdDSA` over an Ed25519 key). B.2.2 matches a COSE header alg literally or a fully
 * specified id with the key's curve: -7 and -9 (ESP256) both cover ECDSA P-256, -35 and -51 (ESP384)
 * ECDSA P-384; HAIP names -7 and -9.
 */
export const VP_FORMATS_SUPPORTED = {
  'dc+sd-jwt': {
    'sd-jwt_alg_values': ['ES256', 'ES384', 'Ed25519'],
    'kb-jwt_alg_values': ['ES256', 'ES384', 'Ed25519'],
  },
  mso_mdoc: { issuerauth_alg_values: [-7, -9, -35, -51], deviceauth_alg_values: [-7, -9, -35, -51] },
}
export const RESPONSE_ENC_VALUES = ['A128GCM', 'A256GCM']

/** The public half of a request's response encryption key, as published in `client_metadata`. */
export function encryptionJwk(deps: VerifierDeps, row: PresentationSessionRow): JWK {
  const privateJwk = deps.keys.cipher.decrypt(row.encryptionKey, `presentation:${row.tenantId}/${row.id}`)
  return { ...publicPart(privateJwk), kid: row.encryptionKid, alg: 'ECDH-ES', use: 'enc' }
}

/**
 * The chain for `x5c` (base64 DER, leaf first) without a trailing self-signed certificate (HAIP:
 * no trust anchor): a self-signed leaf alone stays, a registrar-issued leaf keeps its intermediates.
 */
export function requestX5c(chain: string[]): string[] {
  if (chain.length < 2) return chain
  return isSelfSigned(chain.at(-1) as string) ? chain.slice(0, -1) : chain
}

/**
 * `verifier_info` (OpenID4VP 1.0 §5.1): the registration certificate the registrar issued for
 * this configuration, while it was issued for the DCQL query the configuration holds now and has
 * not expired; otherwise none (a stale certificate would describe another request).
 */
async function verifierInfo(deps: VerifierDeps, tenantId: string, config: PresentationConfig) {
  const certificate = (await deps.registrationCertificates(tenantId)).get(config.id)
  if (!certificate || certificate.dcqlHash !== canonicalHash(config.dcqlQuery)) return undefined
  if (certificate.expiresAt && certificate.expiresAt <= deps.now()) return undefined
  return [{ format: 'registration_cert', data: certificate.jwt }]
}

/**
 * The signed request object (OpenID4VP §5, JAR RFC 9101): `typ` oauth-authz-req+jwt, `x5c`
 * without the trust anchor (HAIP), the request's nonce, state, DCQL query, response URI and
 * mode, client metadata with this request's encryption key, and the registration certificate as
 * `verifier_info` when there is one. `wallet_nonce` is echoed (§5.10).
 */
export const requestObject = traced('verifier request object', requestObjectUntraced)

async function requestObjectUntraced(
  deps: VerifierDeps,
  tenantId: string,
  requestId: string,
  walletNonce?: string,
): Promise<string> {
  const row = await createPresentationSessionRepository(deps.db, tenantId).fetchRequest(requestId, deps.now())
  if (!row) throw new ProtocolError('invalid_request', 'no open request with this id', { status: 404 })
  const config = await deps.tenants.presentationConfig(tenantId, row.presentationConfigId)
  if (!config)
    throw new ProtocolError('invalid_request', 'the presentation configuration is gone', { status: 404 })
  const signer = await deps.keys.signer(tenantId, config.keyChainId)
  const iat = Math.floor(deps.now().getTime() / 1000)
  const info = await verifierInfo(deps, tenantId, config)
  const claims: RequestObject = {
    aud: 'https://self-issued.me/v2',
    iat,
    exp: Math.floor(row.expiresAt.getTime() / 1000),
    client_id: row.clientId,
    response_type: 'vp_token',
    response_mode: row.responseMode as RequestObject['response_mode'],
    response_uri: `${deps.publicUrl}/verifiers/${tenantId}/responses/${requestId}`,
    nonce: row.nonce,
    state: row.state,
    dcql_query: config.dcqlQuery,
    client_metadata: {
      jwks: { keys: [encryptionJwk(deps, row)] },
      vp_formats_supported: VP_FORMATS_SUPPORTED,
      encrypted_response_enc_values_supported: RESPONSE_ENC_VALUES,
    },
    ...(row.transactionData ? { transaction_data: row.transactionData } : {}),
    ...(info ? { verifier_info: info } : {}),
    ...(walletNonce ? { wallet_nonce: walletNonce } : {}),
  }
  return signJws(signer, { typ: 'oauth-authz-req+jwt', kid: signer.kid, x5c: requestX5c(signer.x5c) }, claims)
}
