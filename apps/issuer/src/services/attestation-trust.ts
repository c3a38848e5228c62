import type { X509Certificate } from 'node:crypto'
import type { WalletProvider } from '@credential-service/core-domain'
import {
  ATTESTATION_PROFILE,
  MAX_CHAIN_LENGTH,
  parseCertificate,
  validatePath,
} from '@credential-service/crypto'
import { createWalletProviderRepository, type TrustListRow } from '@credential-service/db-schema'
import {
  FederatedTrustRefusal,
  federatedEntityKeys,
  federationTrustSources,
  type OutboundPolicy,
  type ProtocolDeps,
  trustListCertificates,
} from '@credential-service/server-kit'
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from 'jose'
import type { TenantScope } from '../tenant-scope'

/** Algorithms of wallet and key attestations (HAIP §7: ES256 at least). */
export const ATTESTATION_ALGORITHMS = ['ES256', 'ES384', 'Ed25519'] as const
const ACCEPTED: string[] = [...ATTESTATION_ALGORITHMS, 'EdDSA']

/** Why an attestation is refused. The message is meant for the wallet (`error_description`). */
export class AttestationError extends Error {}

export interface AttestedJwt {
  header: ReturnType<typeof decodeProtectedHeader>
  payload: JWTPayload
  /** The wallet provider whose trust anchor the `x5c` chains to. */
  walletProviderId: string
}

/** A wallet provider's id and its trust anchors (PEM): its trust lists' current certificates. */
export interface TrustedProvider {
  id: string
  trustAnchors: string[]
  /** Its trust lists that contribute nothing now (fail closed), as trustListCertificates names them. */
  unusableTrustLists?: string[]
}

/**
 * Verifies a JWT signed by a wallet provider's attester (wallet attestation, ABCA §5.1; key
 * attestation, OpenID4VCI Appendix D.1): `typ`, an allowed alg, an `x5c` chain to one of the
 * tenant's wallet providers (see trustedProviderOf; a provider's anchors are the current
 * certificates of its `trustListIds`) and the signature of the leaf. Throws an
 * AttestationError naming the failure; the caller maps it to its protocol error. Other errors
 * (the database) pass through.
 */
export async function verifyAttestedJwt(
  scope: TenantScope<Pick<ProtocolDeps, 'db' | 'now' | 'tenants' | 'outbound'>>,
  jwt: string,
  typ: string,
): Promise<AttestedJwt> {
  const { deps, tenantId } = scope
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
  const now = deps.now()
  const providers = await createWalletProviderRepository(deps.db, tenantId).all()
  const lists = providers.some((provider) => provider.trustListIds?.length)
    ? await deps.tenants.trustLists(tenantId)
    : []
  // Without x5c, a provider may be trusted through OpenID Federation (its trust_chain, or its iss).
  if (x5c === undefined && providers.some((p) => federationTrustSources(lists, p.trustListIds).length))
    return verifyFederatedAttestation({ jwt, header, typ, providers, lists, now, outbound: deps.outbound })
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > MAX_CHAIN_LENGTH)
    throw new AttestationError('x5c is required')
  const chain = x5c.map((der, index) => {
    try {
      return parseCertificate(String(der))
    } catch (cause) {
      throw new AttestationError(`x5c certificate ${index} does not parse`, { cause })
    }
  })
  const walletProviderId = await trustedProviderOf(chain, walletProviderTrust(providers, lists, now), now)
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

interface FederatedAttestation {
  jwt: string
  header: ReturnType<typeof decodeProtectedHeader>
  typ: string
  providers: Pick<WalletProvider, 'id' | 'trustListIds'>[]
  lists: TrustListRow[]
  now: Date
  outbound: OutboundPolicy
}

/**
 * An attestation whose wallet provider is a federation entity (OpenID Federation 1.0; OpenID4VCI
 * 1.0 lets key attestations carry `trust_chain`): the chain of its `iss` (the `trust_chain` header
 * when sent, §4.3, else resolved from the anchor) must reach the anchor of one of a provider's
 * trust lists of source type openid-federation, with policies and required trust marks; the
 * signature is checked with the key its `wallet_provider` metadata names by `kid`.
 */
async function verifyFederatedAttestation(options: FederatedAttestation): Promise<AttestedJwt> {
  const { jwt, header, typ, now } = options
  let iss: unknown
  try {
    iss = decodeJwt(jwt).iss
  } catch (cause) {
    throw new AttestationError('it is not a JWT', { cause })
  }
  if (typeof iss !== 'string') throw new AttestationError('it has neither x5c nor an iss to resolve')
  const trustChain = header.trust_chain
  if (
    trustChain !== undefined &&
    !(Array.isArray(trustChain) && trustChain.every((s) => typeof s === 'string'))
  )
    throw new AttestationError('trust_chain must be an array of entity statements')
  const refusals: string[] = []
  for (const provider of options.providers) {
    const sources = federationTrustSources(options.lists, provider.trustListIds)
    if (!sources.length) continue
    let jwks: JSONWebKeySet
    try {
      jwks = await federatedEntityKeys({
        sources,
        entityId: iss,
        entityType: 'wallet_provider',
        now,
        outbound: options.outbound,
        trustChain: trustChain as string[] | undefined,
        what: `wallet provider '${provider.id}': the attester`,
      })
    } catch (error) {
      if (!(error instanceof FederatedTrustRefusal)) throw error
      refusals.push(error.message)
      continue
    }
    try {
      const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), {
        typ,
        algorithms: ACCEPTED,
        currentDate: now,
      })
      return { header, payload, walletProviderId: provider.id }
    } catch (cause) {
      throw new AttestationError(
        cause instanceof errors.JOSEError
          ? `${cause.message} (with the wallet_provider keys of ${iss})`
          : `the signature does not verify with the wallet_provider keys of ${iss}`,
        { cause },
      )
    }
  }
  throw new AttestationError(refusals.join('; '))
}

/**
 * The tenant's wallet providers with their anchors at `now`: the current certificates of the
 * trust lists they name (read from the tenant cache, which follows list
 * changes and refreshes); a list past NextUpdate + grace or not fetched yet contributes nothing.
 */
export function walletProviderTrust(
  providers: Pick<WalletProvider, 'id' | 'trustListIds'>[],
  lists: TrustListRow[],
  now: Date,
): TrustedProvider[] {
  return providers.map((provider) => {
    const fromLists = trustListCertificates(lists, provider.trustListIds, now)
    return {
      id: provider.id,
      trustAnchors: fromLists.certificates,
      unusableTrustLists: fromLists.unusable,
    }
  })
}

/**
 * Path validation of an attestation's `x5c` (leaf first) with the shared RFC 5280 §6.1 check and
 * its HAIP §4.5.1 rules (anchor not in `x5c`, leaf not self-signed; see validatePath). Answers the
 * id of the provider whose anchor issued the path.
 */
export async function trustedProviderOf(
  chain: X509Certificate[],
  providers: TrustedProvider[],
  now: Date,
): Promise<string> {
  const anchors = providers.flatMap(({ id, trustAnchors }) =>
    trustAnchors.map((pem) => ({ id, anchor: parseCertificate(pem) })),
  )
  const validation = await validatePath({
    chain,
    anchors: anchors.map(({ anchor }) => anchor),
    now,
    profile: ATTESTATION_PROFILE,
  })
  if (validation.valid) {
    const found = anchors.find(({ anchor }) => anchor === validation.anchor)
    if (found) return found.id
  }
  const reason =
    validation.valid || validation.untrusted
      ? 'x5c does not chain to a trusted wallet provider'
      : validation.reason
  // A refusal while a provider's trust list is failing closed says so: the likely cause is the list.
  const unusable = [...new Set(providers.flatMap((provider) => provider.unusableTrustLists ?? []))]
  throw new AttestationError(
    unusable.length
      ? `${reason}; trust list(s) ${unusable.join(', ')} contribute no certificates (fail closed)`
      : reason,
  )
}
