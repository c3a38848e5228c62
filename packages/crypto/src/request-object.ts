import { isSelfSigned } from './parsed-certificates'
import { type Signer, signJws } from './signer'

/**
 * The chain for `x5c` (base64 DER, leaf first) without a trailing self-signed certificate (HAIP:
 * no trust anchor): a self-signed leaf alone stays, a registrar-issued leaf keeps its intermediates.
 */
export function requestX5c(chain: string[]): string[] {
  if (chain.length < 2) return chain
  return isSelfSigned(chain.at(-1) as string) ? chain.slice(0, -1) : chain
}

/**
 * A signed request object (JAR, RFC 9101; OpenID4VP 1.0 §5): `typ` oauth-authz-req+jwt, and either
 * the Verifier Attestation in the `jwt` header (§12, the `verifier_attestation` prefix) or the
 * key chain's certificates in `x5c` (the x509 prefixes).
 */
export function signRequestObject(
  signer: Signer,
  claims: Record<string, unknown>,
  verifierAttestation?: string,
): Promise<string> {
  const header = verifierAttestation ? { jwt: verifierAttestation } : { x5c: requestX5c(signer.x5c) }
  return signJws(signer, { typ: 'oauth-authz-req+jwt', kid: signer.kid, ...header }, claims)
}
