import type { X509Certificate } from 'node:crypto'
import {
  type CertificateFacts,
  certificateFacts,
  MDL_DOCUMENT_SIGNER_EKU,
  type Subtree,
} from './certificate-facts'
import { isSelfSigned } from './parsed-certificates'

/** Certificates in one chain, anchor included: real issuer chains have 2 to 4. */
export const MAX_CHAIN_LENGTH = 10

export interface PathProfile {
  /** Extended key usage the leaf must carry. */
  requiredEku?: string
  /** Extended key usage the leaf must carry when it has an extKeyUsage extension at all. */
  ekuWhereSet?: string
  /**
   * HAIP §4.5.1 / ABCA §5.1 (attestations): the anchor must not be sent in the chain, and the leaf
   * must not be self-signed. Without it, a chain certificate equal to an anchor ends the path there
   * (a root sent along, or the tenant's own self-signed key).
   */
  haip?: boolean
}

/** SD-JWT VC issuers and status list signers (SD-JWT VC §3.5, HAIP §6.1.1). */
export const ISSUER_PROFILE: PathProfile = {}
/** mdoc issuers: the leaf is a Document Signer (ISO 18013-5 Annex B.1.4, checklist S-132). */
export const MDOC_ISSUER_PROFILE: PathProfile = { requiredEku: MDL_DOCUMENT_SIGNER_EKU }
/** Wallet and key attestations (HAIP §4.5.1, checklist I-48, I-65). */
export const ATTESTATION_PROFILE: PathProfile = { haip: true }

export interface ValidatePathOptions {
  /** Leaf first, as in `x5c` and `x5chain`. */
  chain: X509Certificate[]
  anchors: X509Certificate[]
  now: Date
  profile: PathProfile
  /** How refusals name the chain: `x5c` gives `x5c certificate 1 is not a CA …`. */
  name?: string
}

export type PathValidation =
  | { valid: true; anchor: X509Certificate }
  /** `untrusted`: the path is well-formed but no anchor issued it. */
  | { valid: false; reason: string; untrusted?: true }

const validAt = (certificate: X509Certificate, now: Date) =>
  new Date(certificate.validFrom) <= now && now <= new Date(certificate.validTo)

const namesIssuer = (certificate: X509Certificate, issuer: X509Certificate) =>
  certificate.issuer === issuer.subject
/**
 * Issuer name and signature only: node's checkIssued also refuses an issuer without keyCertSign,
 * which would hide the real reason (issuerRefusal names it).
 */
const linkRefusal = (certificate: X509Certificate, issuer: X509Certificate) =>
  !namesIssuer(certificate, issuer) ? 'issuer name' : !signedBy(certificate, issuer) ? 'signature' : undefined

// The same issuer certificates come with every credential of an issuer (parseCertificate keeps
// the objects): a signature that verified once is remembered per pair, off the hot path.
const verified = new WeakMap<X509Certificate, WeakSet<X509Certificate>>()
function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  if (verified.get(certificate)?.has(issuer)) return true
  if (!certificate.verify(issuer.publicKey)) return false
  const issuers = verified.get(certificate) ?? new WeakSet()
  issuers.add(issuer)
  verified.set(certificate, issuers)
  return true
}
const selfIssued = (certificate: X509Certificate) => certificate.issuer === certificate.subject

/**
 * RFC 5280 §6.1 path validation of a chain (leaf first) against trust anchors, the one check for
 * every chain the service trusts: SD-JWT VC and mdoc issuers, status list signers, attestations,
 * registrar and imported key chains (checklist S-127). It checks, from the leaf up: validity of
 * every certificate and of the anchor at `now`; allowed signature algorithms; no unknown critical
 * extension; issuer name and signature of every link; every issuer (intermediates and the anchor)
 * a CA with keyCertSign whose pathLenConstraint and name constraints hold below it; the leaf's
 * keyUsage (digitalSignature) and extended key usage per profile; at most MAX_CHAIN_LENGTH
 * certificates. Certificate policies are not processed (no caller requires one). Returns the
 * anchor, or the first refusal.
 */
export async function validatePath(options: ValidatePathOptions): Promise<PathValidation> {
  const { chain, anchors, now, profile, name = 'x5c' } = options
  const leaf = chain[0]
  if (!leaf) return { valid: false, reason: `${name} is empty` }
  if (chain.length > MAX_CHAIN_LENGTH)
    return { valid: false, reason: `${name} has more than ${MAX_CHAIN_LENGTH} certificates` }
  const anchorAt = chain.findIndex((certificate) =>
    anchors.some((anchor) => anchor.raw.equals(certificate.raw)),
  )
  if (anchorAt >= 0 && profile.haip)
    return { valid: false, reason: `${name} must not contain the trust anchor` }
  const path = anchorAt >= 0 ? chain.slice(0, anchorAt) : chain
  const refusal = (await leafRefusal(leaf, profile, name)) ?? (await pathRefusal(path, now, name))
  if (refusal) return { valid: false, reason: refusal }
  const top = path.at(-1)
  // The leaf is itself an anchor (the tenant's own self-signed key): trusted as it is.
  if (!top)
    return validAt(leaf, now)
      ? { valid: true, anchor: leaf }
      : { valid: false, reason: 'the trust anchor is expired or not yet valid' }
  const sent = anchorAt >= 0 ? (chain[anchorAt] as X509Certificate) : undefined
  const link = sent && linkRefusal(top, sent)
  if (link)
    return {
      valid: false,
      reason: `${name} certificate ${anchorAt - 1} is not issued by certificate ${anchorAt} (${link})`,
    }
  const candidates = sent ? [sent] : anchors.filter((anchor) => !linkRefusal(top, anchor))
  let anchorRefusal: string | undefined
  for (const anchor of candidates) {
    const refused = validAt(anchor, now)
      ? await issuerRefusal(anchor, path, path.length)
      : 'is expired or not yet valid'
    if (!refused) return { valid: true, anchor }
    anchorRefusal ??= `the trust anchor ${refused}`
  }
  return anchorRefusal
    ? { valid: false, reason: anchorRefusal }
    : { valid: false, reason: `${name} does not chain to a trust anchor`, untrusted: true }
}

/** The end-entity rules: RFC 5280 §4.2.1.3, §4.2.1.12, HAIP §4.5.1, ISO 18013-5 B.1.4. */
async function leafRefusal(leaf: X509Certificate, profile: PathProfile, name: string) {
  if (profile.haip && isSelfSigned(leaf)) return `the ${name} leaf is self-signed`
  const { keyUsage, extendedKeyUsage } = await certificateFacts(leaf)
  if (keyUsage?.digitalSignature === false)
    return `the ${name} leaf may not sign (keyUsage without digitalSignature)`
  const eku = profile.requiredEku ?? (extendedKeyUsage ? profile.ekuWhereSet : undefined)
  if (eku && !extendedKeyUsage?.includes(eku)) return `the ${name} leaf lacks the extended key usage ${eku}`
  return undefined
}

/** Every certificate below the anchor, and every link between them (RFC 5280 §6.1.3, §6.1.4). */
async function pathRefusal(path: X509Certificate[], now: Date, name: string) {
  for (const [index, certificate] of path.entries()) {
    if (!validAt(certificate, now)) return `${name} certificate ${index} is expired or not yet valid`
    const facts = await certificateFacts(certificate)
    if (!facts.signatureAlgorithm.allowed)
      return `${name} certificate ${index} is signed with ${facts.signatureAlgorithm.name}, which is not allowed`
    const [unknown] = facts.unknownCritical
    if (unknown)
      return `${name} certificate ${index} has a critical extension this service does not process (${unknown})`
  }
  for (let index = 1; index < path.length; index++) {
    const issuer = path[index] as X509Certificate
    const link = linkRefusal(path[index - 1] as X509Certificate, issuer)
    if (link) return `${name} certificate ${index - 1} is not issued by certificate ${index} (${link})`
    const refused = await issuerRefusal(issuer, path, index)
    if (refused) return `${name} certificate ${index} ${refused}`
  }
  return undefined
}

/**
 * Why `issuer`, at position `index` above the leaf, may not have issued the certificates below it
 * (RFC 5280 §6.1.4 (g), (k)-(n)). Self-issued intermediates do not count against pathLenConstraint.
 */
async function issuerRefusal(issuer: X509Certificate, path: X509Certificate[], index: number) {
  const facts = await certificateFacts(issuer)
  if (!facts.ca) return 'is not a CA (basicConstraints cA)'
  if (!facts.keyUsage?.keyCertSign) return 'may not sign certificates (keyUsage keyCertSign)'
  const intermediates = path.slice(1, index).filter((certificate) => !selfIssued(certificate)).length
  if (facts.pathLength !== undefined && intermediates > facts.pathLength)
    return `allows ${facts.pathLength} intermediate certificates below it (pathLenConstraint), not ${intermediates}`
  if (facts.nameConstraints) {
    const below = path.slice(0, index).filter((certificate, at) => at === 0 || !selfIssued(certificate))
    for (const certificate of below) {
      const violation = nameViolation(facts.nameConstraints, await certificateFacts(certificate))
      if (violation) return `has name constraints that ${violation}`
    }
  }
  return undefined
}

/** RFC 5280 §4.2.1.10 for dNSName, URI and directoryName; any other form cannot be checked here. */
function nameViolation(
  constraints: NonNullable<CertificateFacts['nameConstraints']>,
  subject: CertificateFacts,
) {
  const unsupported = [...constraints.permitted, ...constraints.excluded].find(
    (tree) => tree.type === 'unsupported',
  )
  if (unsupported?.type === 'unsupported')
    return `use a form this service does not check (${unsupported.form})`
  const names: Record<'dns' | 'url' | 'dn', string[][]> = {
    dns: subject.dnsNames.map((value) => [value]),
    url: subject.uris.map((value) => [value]),
    dn: subject.subjectRdns.length ? [subject.subjectRdns] : [],
  }
  for (const type of ['dns', 'url', 'dn'] as const) {
    const permitted = constraints.permitted.filter((tree) => tree.type === type)
    const excluded = constraints.excluded.filter((tree) => tree.type === type)
    for (const value of names[type]) {
      if (excluded.some((tree) => within(tree, value))) return `exclude ${value.join(',')}`
      if (permitted.length && !permitted.some((tree) => within(tree, value)))
        return `do not permit ${value.join(',')}`
    }
  }
  return undefined
}

function within(tree: Subtree, value: string[]): boolean {
  if (tree.type === 'dn') return tree.rdns.every((rdn, index) => value[index] === rdn)
  if (tree.type === 'unsupported') return false
  const host = tree.type === 'url' ? hostOf(value[0] ?? '') : (value[0] ?? '')
  if (host === undefined) return false
  return domainWithin(host.toLowerCase(), tree.value.toLowerCase(), tree.type)
}

function hostOf(uri: string): string | undefined {
  try {
    return new URL(uri).hostname || undefined
  } catch {
    return undefined
  }
}

/**
 * dNSName: the name or any subdomain (`example.com` covers `a.example.com`). URI: a host, or with a
 * leading period any host below that domain (RFC 5280 §4.2.1.10).
 */
function domainWithin(host: string, constraint: string, type: 'dns' | 'url'): boolean {
  if (constraint.startsWith('.')) return host.endsWith(constraint)
  if (host === constraint) return true
  return type === 'dns' && (constraint === '' || host.endsWith(`.${constraint}`))
}
