import { type KeyObject, verify, X509Certificate } from 'node:crypto'

/**
 * A verifier of VC-JWTs written from the W3C texts alone, with node:crypto and no code of ours or
 * of a JOSE library: VC Data Model 2.0 (VCDM) and Securing Verifiable Credentials using JOSE and
 * COSE (VC-JOSE-COSE). It answers the list of rules a credential breaks, so that a test shows both
 * that ours pass and that a broken one is caught.
 */

type Json = Record<string, unknown>

const decodePart = (part: string | undefined): Json => {
  const value = JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as unknown
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('not a JSON object')
  return value as Json
}

/** RFC 7518 §3.4: an ES256/ES384 JWS signature is R || S, each the curve's size. */
const HASH_OF: Record<string, string> = { ES256: 'sha256', ES384: 'sha384' }

function signatureHolds(jws: string, key: KeyObject, alg: unknown): boolean {
  const [header, payload, signature] = jws.split('.')
  const input = Buffer.from(`${header}.${payload}`)
  const bytes = Buffer.from(signature ?? '', 'base64url')
  if (alg === 'EdDSA' || alg === 'Ed25519') return verify(null, input, key, bytes)
  const hash = HASH_OF[String(alg)]
  return hash !== undefined && verify(hash, input, { key, dsaEncoding: 'ieee-p1363' }, bytes)
}

/** VCDM 2.0 §4.4 and the `issuer`/`statusListCredential` members: a URL, here one with a scheme. */
const isUrl = (value: unknown) => typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\S+$/i.test(value)
/** VCDM 2.0 §4.9: validFrom/validUntil are `dateTimeStamp` strings (an XML Schema dateTime with offset). */
const DATE_TIME_STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

export interface IndependentResult {
  problems: string[]
  payload: Json
  header: Json
}

/**
 * Checks a `vc+jwt` against the rules of VCDM 2.0 §4 and VC-JOSE-COSE §3.1.1 / §3.3, its
 * signature against the leaf of its `x5c` (RFC 7515 §4.1.6), at time `now`.
 */
export function checkVcJwt(jwt: string, now = new Date()): IndependentResult {
  const problems: string[] = []
  const parts = jwt.split('.')
  if (parts.length !== 3) return { problems: ['not a compact JWS'], payload: {}, header: {} }
  const header = decodePart(parts[0])
  const payload = decodePart(parts[1])
  // VC-JOSE-COSE §3.1.1: "The typ header parameter SHOULD be vc+jwt"; "When present, the cty header
  // parameter SHOULD be vc"; "The JWT Claim Names vc and vp MUST NOT be present".
  if (header.typ !== 'vc+jwt') problems.push('typ is not vc+jwt')
  if (header.cty !== undefined && header.cty !== 'vc') problems.push('cty is not vc')
  if ('vc' in payload || 'vp' in payload) problems.push('a vc or vp claim is present')
  // RFC 7515 §4.1.6: the first certificate of x5c holds the key that signed.
  const leaf = Array.isArray(header.x5c) ? header.x5c[0] : undefined
  if (typeof leaf !== 'string') problems.push('no x5c leaf')
  else if (!signatureHolds(jwt, new X509Certificate(Buffer.from(leaf, 'base64')).publicKey, header.alg))
    problems.push('the signature does not verify with the x5c leaf')
  // VCDM 2.0 §4.3: "The value of the @context property MUST be an ordered set where the first item
  // is a URL with the value https://www.w3.org/ns/credentials/v2".
  const context = payload['@context']
  if (!Array.isArray(context) || context[0] !== 'https://www.w3.org/ns/credentials/v2')
    problems.push('@context does not start with the VCDM 2.0 base context')
  // §4.5: "one value of the type property MUST be VerifiableCredential".
  if (![payload.type].flat().includes('VerifiableCredential'))
    problems.push('type lacks VerifiableCredential')
  // §4.4: "If present, the value of the id property MUST be a single URL".
  if (payload.id !== undefined && !isUrl(payload.id)) problems.push('id is not a URL')
  // §4.7: "A verifiable credential MUST have an issuer property" whose value "MUST be either a URL or
  // an object containing an id property whose value is a URL".
  const issuer = typeof payload.issuer === 'object' ? (payload.issuer as Json | null)?.id : payload.issuer
  if (!isUrl(issuer)) problems.push('issuer is not a URL')
  // VC-JOSE-COSE §3.3.1: "If present, the iss claim MUST match the issuer".
  if (payload.iss !== undefined && payload.iss !== issuer) problems.push('iss does not match issuer')
  // §4.8: "A verifiable credential MUST contain a credentialSubject property", objects each.
  const subjects = [payload.credentialSubject ?? []].flat()
  if (!subjects.length || !subjects.every((s) => typeof s === 'object' && s !== null))
    problems.push('credentialSubject is missing or not an object')
  // §4.9: validFrom / validUntil are dateTimeStamps; the credential is valid now.
  for (const member of ['validFrom', 'validUntil'] as const) {
    const value = payload[member]
    if (value !== undefined && !(typeof value === 'string' && DATE_TIME_STAMP.test(value)))
      problems.push(`${member} is not a dateTimeStamp`)
  }
  if (typeof payload.validFrom === 'string' && Date.parse(payload.validFrom) > now.getTime())
    problems.push('not valid yet')
  if (typeof payload.validUntil === 'string' && Date.parse(payload.validUntil) < now.getTime())
    problems.push('expired')
  // §4.10 with Bitstring Status List §2.1: each entry has a type, and a BitstringStatusListEntry a
  // statusPurpose, a statusListIndex ("an arbitrary size integer … expressed as a string") and a
  // statusListCredential URL.
  for (const entry of [payload.credentialStatus ?? []].flat() as Json[]) {
    if (typeof entry?.type !== 'string') problems.push('a credentialStatus entry has no type')
    else if (entry.type === 'BitstringStatusListEntry') {
      if (typeof entry.statusPurpose !== 'string') problems.push('a status entry has no statusPurpose')
      if (!(typeof entry.statusListIndex === 'string' && /^\d+$/.test(entry.statusListIndex)))
        problems.push('a statusListIndex is not an integer string')
      if (!isUrl(entry.statusListCredential)) problems.push('a statusListCredential is not a URL')
    }
  }
  return { problems, payload, header }
}
