import type { X509Certificate } from 'node:crypto'
import { exceedsJsonDepth, MAX_JSON_DEPTH, VCDM2_CONTEXT } from '@credential-service/core-domain'
import { base64url, compactVerify, decodeJwt, decodeProtectedHeader, type JWK } from 'jose'
import { federatedIssuerKey } from '../../federated-issuer-key'
import { trustedIssuerChain } from '../../issuer-chain'
import { issuerNameRefusal } from '../../issuer-san'
import { PresentationRejected, type PresentationTrust, type QueryTrust } from '../../presentation'
import { type BitstringEntry, bitstringEntriesOf } from './bitstring-status-list'

/** VCDM 1.1 §4.1: the base context of the VCDM 1.1 JWT encoding (its `vc` claim). */
export const VCDM1_CONTEXT = 'https://www.w3.org/2018/credentials/v1'
/** JOSE algorithms accepted on a VC-JWT and on a VP JWT (the verifier's `alg_values`, and EdDSA). */
export const VC_JWT_ALGORITHMS = ['ES256', 'ES384', 'Ed25519', 'EdDSA']
/** Leeway for the validity of a credential, as for SD-JWT VCs (sd-jwt-vc/verify.ts). */
const CLOCK_SKEW_SECONDS = 10
/** JWT claims (RFC 7519, RFC 7800) that secure a VCDM 2.0 credential and are not part of it. */
const JWT_CLAIMS = ['iss', 'sub', 'aud', 'iat', 'nbf', 'exp', 'jti', 'cnf']

type Json = Record<string, unknown>

/** A VC-JWT whose issuer signature, chain and validity were checked. */
export interface VerifiedVc {
  /** The credential from its root (OpenID4VP 1.0 B.1.2: DCQL claims paths start there). */
  credential: Json
  types: string[]
  /** The holder's key: `cnf.jwk`, or a did:jwk subject; undefined for a credential without binding. */
  holderJwk: JWK | undefined
  /** The subject's id (VCDM 2.0 `credentialSubject.id`, 1.1 `sub`), which a VP may name as its holder. */
  subjectId: string | undefined
  /** Its BitstringStatusListEntry members (VCDM 2.0 §4.10 `credentialStatus`). */
  statuses: BitstringEntry[]
}

/** The JSON of a JWS's header and payload nests no deeper than the input guard allows (checklist S-123). */
export function refuseDeepJson(jws: string, what: string): void {
  const parts = jws.split('.').slice(0, 2)
  if (parts.some((part) => exceedsJsonDepth(Buffer.from(part, 'base64url').toString('utf8'))))
    throw new PresentationRejected(`the ${what} holds JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
}

/** The public JWK a did:jwk names (did:jwk method: `did:jwk:` + base64url of the JWK's JSON). */
export function didJwkKey(did: unknown): JWK | undefined {
  if (typeof did !== 'string' || !did.startsWith('did:jwk:')) return undefined
  try {
    const jwk = JSON.parse(
      new TextDecoder().decode(base64url.decode(did.slice(8).split('#')[0] ?? '')),
    ) as JWK
    return typeof jwk === 'object' && jwk !== null && typeof jwk.kty === 'string' && !('d' in jwk)
      ? jwk
      : undefined
  } catch {
    return undefined
  }
}

const asObject = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined

/**
 * The credential inside a verified VC-JWT payload: VCDM 2.0 secured with JOSE (VC-JOSE-COSE §3.1.1:
 * the payload is the credential, `typ` vc+jwt), or the VCDM 1.1 JWT encoding (VCDM 1.1 §6.3.1: the
 * credential in the `vc` claim, `iss` its issuer, `nbf`/`exp` its validity, `sub` its subject's id).
 */
function credentialOf(payload: Json, typ: unknown): { credential: Json; v1: boolean } {
  const v1 = asObject(payload.vc)
  if (v1) {
    if (typ === 'vc+jwt')
      throw new PresentationRejected('a vc+jwt credential has no vc claim (VC-JOSE-COSE §3.1.1)')
    if (!Array.isArray(v1['@context']) || v1['@context'][0] !== VCDM1_CONTEXT)
      throw new PresentationRejected(`the credential's first @context is not ${VCDM1_CONTEXT}`)
    return { credential: v1, v1: true }
  }
  // VCDM 2.0 §4.3: "the first item is a URL with the value https://www.w3.org/ns/credentials/v2".
  if (!Array.isArray(payload['@context']) || payload['@context'][0] !== VCDM2_CONTEXT)
    throw new PresentationRejected(`the credential's first @context is not ${VCDM2_CONTEXT}`)
  const credential = Object.fromEntries(Object.entries(payload).filter(([key]) => !JWT_CLAIMS.includes(key)))
  return { credential, v1: false }
}

/** VCDM 2.0 §4.5 (1.1 §4.3): `type` is a value or a set of them, `VerifiableCredential` among them. */
function typesOf(credential: Json): string[] {
  const types = [credential.type].flat()
  if (!types.every((type) => typeof type === 'string') || !types.includes('VerifiableCredential'))
    throw new PresentationRejected('the credential type does not include VerifiableCredential')
  return types as string[]
}

/** The validity period: VCDM 2.0 §4.9 validFrom/validUntil and JWT iat/exp/nbf (RFC 7519 §4.1). */
function refuseOutsideValidity(credential: Json, payload: Json, now: Date): void {
  const at = now.getTime() / 1000
  const time = (value: unknown) => (typeof value === 'string' ? Date.parse(value) / 1000 : Number.NaN)
  const notBefore = [time(credential.validFrom), Number(payload.nbf ?? Number.NaN)].filter(Number.isFinite)
  const notAfter = [time(credential.validUntil), Number(payload.exp ?? Number.NaN)].filter(Number.isFinite)
  if (notBefore.some((t) => t > at + CLOCK_SKEW_SECONDS))
    throw new PresentationRejected('the credential is not yet valid')
  if (notAfter.some((t) => t < at - CLOCK_SKEW_SECONDS))
    throw new PresentationRejected('the credential has expired')
}

/** The `iss` of a JWT not verified yet (the entity id whose chain gives the key), if any. */
function unverifiedIss(jwt: string): unknown {
  try {
    return decodeJwt(jwt).iss
  } catch {
    throw new PresentationRejected('the credential is not a JWT')
  }
}

/**
 * Verifies a VC-JWT (OpenID4VCI 1.0 A.1.1, OpenID4VP 1.0 B.1.3): its `x5c` chain under `trust` (or,
 * without x5c, its `iss`'s OpenID Federation trust chain), the issuer's signature by that key, the issuer named by the leaf (VC-JOSE-COSE §3.3.1: `iss`, when
 * present, "MUST match issuer"), its type and its validity period.
 */
export async function verifyVcJwt(jwt: string, trust: PresentationTrust & QueryTrust): Promise<VerifiedVc> {
  refuseDeepJson(jwt, 'credential')
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(jwt)
  } catch {
    throw new PresentationRejected('the credential is not a JWT')
  }
  // An issuer without x5c may be trusted through OpenID Federation (its iss is its entity id).
  const federated = header.x5c === undefined && trust.federatedIssuer !== undefined
  const chain: X509Certificate[] = federated ? [] : await trustedIssuerChain(header.x5c, trust)
  const key = federated
    ? await federatedIssuerKey(unverifiedIss(jwt), header, trust, 'credential')
    : (chain[0] as X509Certificate).publicKey
  let payload: Json
  try {
    const verified = await compactVerify(jwt, key, { algorithms: VC_JWT_ALGORITHMS })
    payload = asObject(JSON.parse(new TextDecoder().decode(verified.payload))) ?? {}
  } catch {
    throw new PresentationRejected(
      `the credential signature did not verify with ${federated ? 'the key its trust chain names' : 'its x5c leaf'}`,
    )
  }
  const { credential, v1 } = credentialOf(payload, header.typ)
  const issuer = typeof credential.issuer === 'string' ? credential.issuer : asObject(credential.issuer)?.id
  const issuerId = v1 ? payload.iss : issuer
  // VCDM 2.0 §4.7 "A verifiable credential MUST have an issuer property" (1.1 §6.3.1: `iss`).
  if (typeof issuerId !== 'string' || !issuerId)
    throw new PresentationRejected('the credential names no issuer')
  if (!v1 && payload.iss !== undefined && payload.iss !== issuer)
    throw new PresentationRejected('the credential iss does not match its issuer (VC-JOSE-COSE §3.3.1)')
  // A federated issuer's key was found by its iss, so the issuer is the entity its chain names.
  if (federated && issuerId !== unverifiedIss(jwt))
    throw new PresentationRejected('the credential issuer is not the iss its trust chain was resolved for')
  const nameProblem =
    trust.acceptAnyIssuer || federated
      ? undefined
      : await issuerNameRefusal(issuerId, chain[0] as X509Certificate)
  if (nameProblem) throw new PresentationRejected(nameProblem)
  const types = typesOf(credential)
  refuseOutsideValidity(credential, payload, trust.now)
  const cnf = asObject(asObject(payload.cnf)?.jwk) as JWK | undefined
  const subjectId = v1 ? payload.sub : asObject(credential.credentialSubject)?.id
  return {
    credential,
    types,
    holderJwk: cnf ?? didJwkKey(subjectId),
    subjectId: typeof subjectId === 'string' ? subjectId : undefined,
    statuses: bitstringEntriesOf(credential.credentialStatus),
  }
}
