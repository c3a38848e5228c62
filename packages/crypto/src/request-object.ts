import { type ClientIdPrefix, verifierDid } from '@credential-service/core-domain'
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

/** How the wallet finds the request's key, by client identifier prefix (OpenID4VP 1.0 §5.9.3). */
export type RequestKeyReference =
  /** x509_san_dns, x509_hash: the key chain's certificates in `x5c`. */
  | { kind: 'x5c' }
  /** verifier_attestation (§12): the attestation in the `jwt` header; its cnf names the key. */
  | { kind: 'attestation'; jwt: string }
  /** decentralized_identifier: `kid` is a DID URL of the verifier's DID document. */
  | { kind: 'did'; did: string }
  /** openid_federation: the verifier's trust chain in the `trust_chain` header (OpenID Federation 1.0 §4.3). */
  | { kind: 'federation'; trustChain: string[] }

/**
 * The key reference of a configuration's requests. A `verifier_attestation` configuration without
 * its attestation cannot sign (the caller refuses it before).
 */
export function requestKeyReference(
  config: { clientIdPrefix: ClientIdPrefix; verifierAttestation?: string | undefined },
  verifier: { publicUrl: string; tenantId: string; trustChain?: string[] | undefined },
): RequestKeyReference {
  if (config.clientIdPrefix === 'openid_federation' && verifier.trustChain)
    return { kind: 'federation', trustChain: verifier.trustChain }
  if (config.clientIdPrefix === 'decentralized_identifier')
    return { kind: 'did', did: verifierDid(verifier.publicUrl, verifier.tenantId) }
  if (config.clientIdPrefix === 'verifier_attestation' && config.verifierAttestation)
    return { kind: 'attestation', jwt: config.verifierAttestation }
  return { kind: 'x5c' }
}

/** A signed request object (JAR, RFC 9101; OpenID4VP 1.0 §5): `typ` oauth-authz-req+jwt, the key referenced as the prefix asks. */
export function signRequestObject(
  signer: Signer,
  claims: Record<string, unknown>,
  key: RequestKeyReference,
): Promise<string> {
  const header =
    key.kind === 'did'
      ? { kid: `${key.did}#${signer.kid}` }
      : key.kind === 'attestation'
        ? { kid: signer.kid, jwt: key.jwt }
        : key.kind === 'federation'
          ? { kid: signer.kid, trust_chain: key.trustChain }
          : { kid: signer.kid, x5c: requestX5c(signer.x5c) }
  return signJws(signer, { typ: 'oauth-authz-req+jwt', ...header }, claims)
}
