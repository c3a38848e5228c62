import type { X509Certificate } from 'node:crypto'
import { certificateConstraints, parseCertificate } from '@credential-service/crypto'
import { createWalletProviderRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from 'jose'

/** Algorithms of wallet and key attestations (HAIP §7: ES256 at least). */
export const ATTESTATION_ALGORITHMS = ['ES256', 'ES384', 'Ed25519'] as const
const ACCEPTED: string[] = [...ATTESTATION_ALGORITHMS, 'EdDSA']
const MAX_CHAIN_LENGTH = 10

/** Why an attestation is refused. The message is meant for the wallet (`error_description`). */
export class AttestationError extends Error {}

export interface AttestedJwt {
  header: ReturnType<typeof decodeProtectedHeader>
  payload: JWTPayload
  /** The wallet provider whose trust anchor the `x5c` chains to. */
  walletProviderId: string
}

/** A wallet provider's id and its trust anchors (PEM), as stored. */
export interface TrustedProvider {
  id: string
  trustAnchors: string[]
}

/**
 * Verifies a JWT signed by a wallet provider's attester (wallet attestation, ABCA §5.1; key
 * attestation, OpenID4VCI Appendix D.1): `typ`, an allowed alg, an `x5c` chain to one of the
 * tenant's wallet providers (see trustedProviderOf) and the signature of the leaf. Throws an
 * AttestationError naming the failure; the caller maps it to its protocol error. Other errors
 * (the database) pass through.
 */
export async function verifyAttestedJwt(
  deps: Pick<ProtocolDeps, 'db' | 'now'>,
  tenantId: string,
  jwt: string,
  typ: string,
): Promise<AttestedJwt> {
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(jwt)
  } catch (cause) {
    throw new AttestationError('it is not a JWT', { cause })
  }
  if (header.typ !== typ) throw new AttestationError(`typ must be ${typ}`)
  if (!ACCEPTED.includes(String(header.alg)))
    throw new AttestationError(`alg ${String(header.alg)} is not allowed`)
  const x5c = header.x5c
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > MAX_CHAIN_LENGTH)
    throw new AttestationError('x5c is required')
  const chain = x5c.map((der, index) => {
    try {
      return parseCertificate(String(der))
    } catch (cause) {
      throw new AttestationError(`x5c certificate ${index} does not parse`, { cause })
    }
  })
  const now = deps.now()
  const providers = await createWalletProviderRepository(deps.db, tenantId).all()
  const walletProviderId = await trustedProviderOf(chain, providers, now)
  try {
    const leaf = chain[0] as X509Certificate
    const { payload } = await jwtVerify(jwt, leaf.publicKey, { typ, algorithms: ACCEPTED, currentDate: now })
    return { header, payload, walletProviderId }
  } catch (cause) {
    throw new AttestationError(
      cause instanceof errors.JOSEError ? cause.message : 'the signature does not verify with the x5c leaf',
      { cause },
    )
  }
}

/**
 * Path validation of an attestation's `x5c` (leaf first; RFC 5280 §6.1 as far as attestations
 * need it; HAIP §4.5.1): every certificate and the anchor valid at `now`; a leaf that is not
 * self-signed and, when it has a keyUsage, may sign; the anchor not in `x5c`; every issuer (each
 * certificate after the leaf, and the anchor) a CA (basicConstraints cA, keyUsage keyCertSign) whose
 * pathLenConstraint allows the intermediates below it, and whose key signed the certificate before
 * it. Answers the id of the provider whose anchor issued the last certificate.
 */
export async function trustedProviderOf(
  chain: X509Certificate[],
  providers: TrustedProvider[],
  now: Date,
): Promise<string> {
  const leaf = chain[0] as X509Certificate
  for (const [index, certificate] of chain.entries())
    if (!validAt(certificate, now))
      throw new AttestationError(`x5c certificate ${index} is expired or not yet valid`)
  if (signedBy(leaf, leaf)) throw new AttestationError('the x5c leaf is self-signed')
  if ((await certificateConstraints(leaf)).keyUsage?.digitalSignature === false)
    throw new AttestationError('the x5c leaf may not sign (keyUsage without digitalSignature)')
  const anchors = providers.flatMap(({ id, trustAnchors }) =>
    trustAnchors.map((pem) => ({ id, anchor: parseCertificate(pem) })),
  )
  // HAIP §4.5.1 / ABCA: the trust anchor is not sent in x5c.
  if (anchors.some(({ anchor }) => chain.some((certificate) => certificate.raw.equals(anchor.raw))))
    throw new AttestationError('x5c must not contain the trust anchor')
  for (let index = 1; index < chain.length; index++) {
    const issuer = chain[index] as X509Certificate
    const refusal = await issuerRefusal(issuer, intermediatesBelow(chain, index))
    if (refusal) throw new AttestationError(`x5c certificate ${index} ${refusal}`)
    if (!signedBy(chain[index - 1] as X509Certificate, issuer))
      throw new AttestationError(`x5c certificate ${index - 1} is not issued by certificate ${index}`)
  }
  const top = chain.at(-1) as X509Certificate
  let anchorRefusal: string | undefined
  for (const { id, anchor } of anchors) {
    if (!signedBy(top, anchor)) continue
    const refusal = validAt(anchor, now)
      ? await issuerRefusal(anchor, intermediatesBelow(chain, chain.length))
      : 'is expired or not yet valid'
    if (!refusal) return id
    anchorRefusal ??= `the trust anchor ${refusal}`
  }
  throw new AttestationError(anchorRefusal ?? 'x5c does not chain to a trusted wallet provider')
}

const validAt = (certificate: X509Certificate, now: Date) =>
  new Date(certificate.validFrom) <= now && now <= new Date(certificate.validTo)

/**
 * Issuer name and signature only: node's checkIssued also refuses an issuer whose keyUsage lacks
 * keyCertSign, which would hide the self-signed leaf with a plain keyUsage and the cause of a non-CA
 * issuer (issuerRefusal names it).
 */
const signedBy = (certificate: X509Certificate, issuer: X509Certificate) =>
  certificate.issuer === issuer.subject && certificate.verify(issuer.publicKey)

/** The intermediates between the leaf and position `index`; self-issued ones do not count (RFC 5280 §6.1.4 (l)). */
const intermediatesBelow = (chain: X509Certificate[], index: number) =>
  chain.slice(1, index).filter((certificate) => certificate.subject !== certificate.issuer).length

/** Why `issuer` may not have issued a path with `below` intermediates under it (RFC 5280 §6.1.4 (k)-(n)). */
async function issuerRefusal(issuer: X509Certificate, below: number): Promise<string | undefined> {
  const { ca, pathLength, keyUsage } = await certificateConstraints(issuer)
  if (!ca) return 'is not a CA (basicConstraints cA)'
  if (!keyUsage?.keyCertSign) return 'may not sign certificates (keyUsage keyCertSign)'
  if (pathLength !== undefined && below > pathLength)
    return `allows ${pathLength} intermediate certificates below it (pathLenConstraint), not ${below}`
  return undefined
}
