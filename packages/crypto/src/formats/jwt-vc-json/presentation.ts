import { vcTypesMatch } from '@credential-service/core-domain'
import {
  calculateJwkThumbprint,
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  importJWK,
  type JWK,
  type JWTPayload,
} from 'jose'
import { PresentationRejected, type PresentationTrust, type QueryTrust } from '../../presentation'
import { didJwkKey, refuseDeepJson, VC_JWT_ALGORITHMS, type VerifiedVc, verifyVcJwt } from './credential'

/** VC-JOSE-COSE §3.2.2: an enveloped credential's id is this data: URL of the VC-JWT. */
const ENVELOPED_VC_PREFIX = 'data:application/vc+jwt,'
/** How old and how far ahead a VP JWT's `iat` may be, as for SD-JWT key binding JWTs. */
const VP_MAX_AGE_SECONDS = 300
const VP_MAX_SKEW_SECONDS = 60

export interface VcPresentationCheck extends PresentationTrust, QueryTrust {
  presentation: string
  /** The query's `meta.type_values` (OpenID4VP 1.0 B.1.1). */
  typeValues: string[][]
  nonce: string
  /** What the VP `aud` may be: the client id, or `origin:<origin>` over the DC API (OpenID4VP 1.0 B.1.3). */
  audiences: readonly string[]
  requireHolderBinding: boolean
}

/**
 * The one VC-JWT a VP JWT carries: VCDM 2.0 (VC-JOSE-COSE §3.2.2, `typ` vp+jwt) enveloped as
 * `{ type: EnvelopedVerifiableCredential, id: data:application/vc+jwt,... }` in `verifiableCredential`,
 * or VCDM 1.1 (§6.3.1) as a JWT string in `vp.verifiableCredential`, as OpenID4VP 1.0 B.1.3's example.
 */
function credentialIn(payload: JWTPayload): string {
  const vp = (payload.vp ?? payload) as { verifiableCredential?: unknown }
  const credentials = [vp.verifiableCredential ?? []].flat()
  if (credentials.length !== 1)
    throw new PresentationRejected(`the VP holds ${credentials.length} credentials; one was asked for`)
  const [entry] = credentials
  if (typeof entry === 'string' && payload.vp) return entry
  const { type, id } = (entry ?? {}) as { type?: unknown; id?: unknown }
  if (
    [type].flat().includes('EnvelopedVerifiableCredential') &&
    typeof id === 'string' &&
    id.startsWith(ENVELOPED_VC_PREFIX)
  )
    return id.slice(ENVELOPED_VC_PREFIX.length)
  throw new PresentationRejected('the VP credential is neither an EnvelopedVerifiableCredential nor a VC-JWT')
}

/**
 * The holder a VP JWT names: VCDM 1.1 §6.3.1 "iss MUST represent the holder property of a
 * verifiable presentation" (and `vp.holder`); VCDM 2.0 §4.13 `holder` of a vp+jwt payload, a URL
 * or an object with an `id`. Each one given counts.
 */
function holdersNamed(payload: JWTPayload): unknown[] {
  const vp = (payload.vp ?? {}) as { holder?: unknown }
  return [payload.iss, vp.holder, (payload as { holder?: unknown }).holder]
    .filter((holder) => holder !== undefined)
    .map((holder) =>
      typeof holder === 'object' && holder !== null ? (holder as { id?: unknown }).id : holder,
    )
}

/**
 * OpenID4VP 1.0 Appendix B.1 (its VP example: `iss` the DID the credential's subject is): a holder
 * the VP names must be the credential's holder, its subject id or a did:jwk of the bound key. The
 * signature check proves the key; this refuses a VP claiming to be someone else's.
 */
async function refuseOtherHolder(payload: JWTPayload, vc: VerifiedVc, holderJwk: JWK): Promise<void> {
  const bound = await calculateJwkThumbprint(holderJwk)
  for (const holder of holdersNamed(payload)) {
    if (typeof holder === 'string' && holder === vc.subjectId) continue
    const named = didJwkKey(holder)
    if (named && (await calculateJwkThumbprint(named)) === bound) continue
    throw new PresentationRejected(
      `the VP names ${JSON.stringify(holder)} as its holder, not the credential's`,
    )
  }
}

/**
 * OpenID4VP 1.0 B.1.3: "the nonce claim MUST be the value of nonce from the Authorization Request;
 * the aud claim MUST be the value of the Client Identifier" (or `origin:` over the DC API); the VP
 * JWT signed by the key the credential binds (§14.1), and fresh.
 */
async function verifyHolderBinding(vpJwt: string, vc: VerifiedVc, check: VcPresentationCheck): Promise<void> {
  if (!vc.holderJwk)
    throw new PresentationRejected('the credential binds no holder key (cnf.jwk or did:jwk subject)')
  let payload: JWTPayload
  try {
    const alg = String(decodeProtectedHeader(vpJwt).alg)
    const verified = await compactVerify(vpJwt, await importJWK(vc.holderJwk as JWK, alg), {
      algorithms: VC_JWT_ALGORITHMS,
    })
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as JWTPayload
  } catch {
    throw new PresentationRejected('the VP JWT is not signed by the holder key of its credential')
  }
  await refuseOtherHolder(payload, vc, vc.holderJwk)
  const aud = [payload.aud].flat()
  if (aud.length !== 1 || !check.audiences.includes(aud[0] as string))
    throw new PresentationRejected(
      `the VP JWT aud is not ${check.audiences.map((a) => `'${a}'`).join(' or ')}`,
    )
  if (payload.nonce !== check.nonce)
    throw new PresentationRejected('the VP JWT nonce is not the request nonce')
  // The nonce makes it one request's; its time, `iat` or (VCDM 1.1 §6.3.1, did-jwt-vc) `nbf`, must
  // be recent when given, and `exp` not past.
  const now = Math.floor(check.now.getTime() / 1000)
  const issued = payload.iat ?? payload.nbf
  if (issued !== undefined && !(issued >= now - VP_MAX_AGE_SECONDS && issued <= now + VP_MAX_SKEW_SECONDS))
    throw new PresentationRejected('the VP JWT iat is not fresh')
  if (payload.exp !== undefined && !(payload.exp > now - VP_MAX_SKEW_SECONDS))
    throw new PresentationRejected('the VP JWT has expired')
}

/**
 * Verifies a jwt_vc_json presentation (OpenID4VP 1.0 Appendix B.1): the VC-JWT inside the VP JWT
 * (verifyVcJwt), its type against `type_values`, and the VP JWT as the holder binding. Without
 * holder binding asked for (B.1: "a Verifiable Credential without Holder Binding MUST be
 * returned"), the presentation is the VC-JWT itself. Answers the credential from its root.
 */
export async function verifyVcPresentation(check: VcPresentationCheck): Promise<VerifiedVc> {
  refuseDeepJson(check.presentation, 'presentation')
  let payload: JWTPayload
  try {
    payload = decodeJwt(check.presentation)
  } catch {
    throw new PresentationRejected('the presentation is not a JWT')
  }
  const isVp = payload.vp !== undefined || payload.verifiableCredential !== undefined
  if (!isVp && check.requireHolderBinding)
    throw new PresentationRejected('a VP JWT was asked for, not a bare credential')
  const vc = await verifyVcJwt(isVp ? credentialIn(payload) : check.presentation, check)
  if (!vcTypesMatch(check.typeValues, vc.types))
    throw new PresentationRejected(`type ${JSON.stringify(vc.types)} was not requested`)
  if (isVp) await verifyHolderBinding(check.presentation, vc, check)
  // Bitstring Status List §3.2, checklist V-33: the status once the credential and its binding verified.
  for (const entry of vc.statuses) await check.requireValidStatus(entry, 'bitstring')
  return vc
}
