import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose'

export interface VerifierAttestationExpectations {
  /** The verifier's identifier the attestation must be issued to (its `sub`). */
  sub: string
  /** The public key that signs the request objects: the attestation's `cnf.jwk` must be this key. */
  publicJwk: JWK
  now: Date
}

/**
 * What is wrong with a Verifier Attestation JWT (OpenID4VP 1.0 §12, §5.9.3; checklist V-08) for
 * signing our request objects: `typ` `verifier-attestation+jwt`, an `iss`, `sub` = the verifier's
 * identifier, `exp` in the future, `cnf.jwk` = the request signing key. The issuer's signature is
 * not checked: that is the wallet's trust decision (the `iss` must be a party it trusts), and the
 * service holds no list of attestation issuers. An empty list means usable; undefined is "missing".
 */
export async function verifierAttestationIssues(
  jwt: string | undefined,
  expected: VerifierAttestationExpectations,
): Promise<string[]> {
  if (!jwt) return ['clientIdPrefix verifier_attestation needs a verifierAttestation']
  let header: ReturnType<typeof decodeProtectedHeader>
  let payload: ReturnType<typeof decodeJwt>
  try {
    header = decodeProtectedHeader(jwt)
    payload = decodeJwt(jwt)
  } catch {
    return ['not a decodable JWT']
  }
  const issues: string[] = []
  if (header.typ !== 'verifier-attestation+jwt')
    issues.push(`typ must be verifier-attestation+jwt, not ${JSON.stringify(header.typ ?? null)}`)
  if (!header.alg || header.alg === 'none') issues.push('the attestation must be signed (alg none)')
  if (typeof payload.iss !== 'string' || !payload.iss) issues.push('iss is missing')
  if (payload.sub !== expected.sub)
    issues.push(
      `sub must be this tenant's verifier identifier ${expected.sub}, not ${JSON.stringify(payload.sub ?? null)}`,
    )
  if (typeof payload.exp !== 'number') issues.push('exp is missing')
  else if (payload.exp * 1000 <= expected.now.getTime()) issues.push('the attestation has expired (exp)')
  const cnf = (payload.cnf as { jwk?: JWK } | undefined)?.jwk
  if (!cnf || typeof cnf !== 'object') issues.push('cnf.jwk is missing')
  else if ('d' in cnf) issues.push('cnf.jwk holds a private key')
  else {
    const same = await Promise.all([calculateJwkThumbprint(cnf), calculateJwkThumbprint(expected.publicJwk)])
      .then(([a, b]) => a === b)
      .catch(() => false)
    if (!same) issues.push("cnf.jwk is not the public key of the configuration's key chain (keyChainId)")
  }
  return issues
}
