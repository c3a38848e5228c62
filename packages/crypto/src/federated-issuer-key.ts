import { type decodeProtectedHeader, importJWK } from 'jose'
import { ASYMMETRIC_JWS_ALGORITHMS } from './asymmetric-algorithms'
import { PresentationRejected, type PresentationTrust, type QueryTrust } from './presentation'

/**
 * The key of a credential issuer without `x5c`, through the configuration's OpenID Federation trust
 * sources: the chain of the (not yet verified) `iss` is resolved first, then the key its
 * `openid_credential_issuer` metadata names by the header's `kid` is answered; the caller checks
 * the signature with it, so a wrong `iss` fails there. `what` names the credential in refusals.
 */
export async function federatedIssuerKey(
  iss: unknown,
  header: ReturnType<typeof decodeProtectedHeader>,
  trust: PresentationTrust & QueryTrust,
  what: string,
): Promise<Awaited<ReturnType<typeof importJWK>>> {
  if (typeof iss !== 'string' || !iss) throw new PresentationRejected(`the ${what} has no iss and no x5c`)
  const resolve = trust.federatedIssuer
  if (!resolve) throw new PresentationRejected(`the ${what} has no x5c`)
  const jwks = await resolve(iss, trust.trustedAuthorities)
  // Public keys only: a symmetric alg would let the published key material forge a signature.
  if (!(ASYMMETRIC_JWS_ALGORITHMS as readonly string[]).includes(String(header.alg)))
    throw new PresentationRejected(
      `the ${what}'s alg ${String(header.alg)} is not an asymmetric JWS algorithm`,
    )
  const jwk = typeof header.kid === 'string' ? jwks.keys.find((key) => key.kid === header.kid) : undefined
  if (!jwk)
    throw new PresentationRejected(
      `the ${what}'s kid ${String(header.kid)} names no key of the openid_credential_issuer metadata of ${iss}`,
    )
  try {
    return await importJWK(jwk, String(header.alg))
  } catch {
    throw new PresentationRejected(`the key ${String(header.kid)} of ${iss} does not fit the ${what}'s alg`)
  }
}
