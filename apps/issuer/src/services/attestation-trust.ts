import type { X509Certificate } from 'node:crypto'
import { parseCertificate } from '@credential-service/crypto'
import { createWalletProviderRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose'

/** Algorithms of wallet and key attestations (HAIP §7: ES256 at least). */
export const ATTESTATION_ALGORITHMS = ['ES256', 'ES384', 'Ed25519'] as const
const ACCEPTED: string[] = [...ATTESTATION_ALGORITHMS, 'EdDSA']

export interface AttestedJwt {
  header: ReturnType<typeof decodeProtectedHeader>
  payload: JWTPayload
  /** The wallet provider whose trust anchor the `x5c` chains to. */
  walletProviderId: string
}

/**
 * Verifies a JWT signed by a wallet provider's attester (wallet attestation, ABCA §5.1; key
 * attestation, OpenID4VCI Appendix D.1): `typ`, an allowed alg, an `x5c` chain whose last
 * certificate is issued by one of a tenant wallet provider's anchors (the anchor itself is not in
 * the chain, and the leaf is not self-signed), every certificate valid now, and the signature of
 * the leaf. Throws an Error naming the failure; the caller maps it to its protocol error.
 */
export async function verifyAttestedJwt(
  deps: Pick<ProtocolDeps, 'db' | 'now'>,
  tenantId: string,
  jwt: string,
  typ: string,
): Promise<AttestedJwt> {
  const header = decodeProtectedHeader(jwt)
  if (header.typ !== typ) throw new Error(`typ must be ${typ}`)
  if (!ACCEPTED.includes(String(header.alg))) throw new Error(`alg ${String(header.alg)} is not allowed`)
  const x5c = header.x5c
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > 10) throw new Error('x5c is required')
  const chain = x5c.map((der) => parseCertificate(String(der)))
  const now = deps.now()
  for (const [index, certificate] of chain.entries()) {
    if (new Date(certificate.validFrom) > now || new Date(certificate.validTo) < now)
      throw new Error(`x5c certificate ${index} is not valid now`)
    const next = chain[index + 1]
    if (next && !(certificate.checkIssued(next) && certificate.verify(next.publicKey)))
      throw new Error(`x5c certificate ${index} is not issued by certificate ${index + 1}`)
  }
  const leaf = chain[0] as X509Certificate
  if (leaf.checkIssued(leaf) && leaf.verify(leaf.publicKey)) throw new Error('the x5c leaf is self-signed')
  const providers = await createWalletProviderRepository(deps.db, tenantId).all()
  const top = chain.at(-1) as X509Certificate
  let walletProviderId: string | undefined
  for (const provider of providers) {
    for (const pem of provider.trustAnchors) {
      const anchor = parseCertificate(pem)
      // HAIP §4.5.1 / ABCA: the trust anchor is not sent in x5c.
      if (chain.some((certificate) => certificate.raw.equals(anchor.raw)))
        throw new Error('x5c must not contain the trust anchor')
      if (!walletProviderId && top.checkIssued(anchor) && top.verify(anchor.publicKey))
        walletProviderId = provider.id
    }
  }
  if (!walletProviderId) throw new Error('x5c does not chain to a trusted wallet provider')
  const { payload } = await jwtVerify(jwt, leaf.publicKey, {
    typ,
    algorithms: ACCEPTED,
    currentDate: now,
  })
  return { header, payload, walletProviderId }
}
