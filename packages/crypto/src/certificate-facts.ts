import type * as X509 from '@peculiar/x509'

// Loaded on first use: the management app makes and reads certificate chains, the issuer reads
// extensions only when it checks an attestation's x5c, and the library (with reflect-metadata)
// would add to the resident memory of every process.
let x509Module: Promise<typeof X509> | undefined
export const loadX509 = () => (x509Module ??= import('reflect-metadata').then(() => import('@peculiar/x509')))

/** id-mdl-kp-mdlDS, the extended key usage of an mdoc Document Signer (ISO 18013-5 Annex B.1.4). */
export const MDL_DOCUMENT_SIGNER_EKU = '1.0.18013.5.1.2'

const OID = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  nameConstraints: '2.5.29.30',
  certificatePolicies: '2.5.29.32',
}

/**
 * Critical extensions path validation processes (RFC 5280 §6.1.4 (o): any other critical one
 * refuses the path). certificatePolicies is understood as "any policy": no caller asks for an
 * explicit policy, so §6.1 accepts the path whatever the policies say.
 */
const UNDERSTOOD = new Set(Object.values(OID))

/** A name constraint subtree (RFC 5280 §4.2.1.10) of a form path validation checks. */
export type Subtree =
  | { type: 'dns' | 'url'; value: string }
  | { type: 'dn'; rdns: string[] }
  /** Any other form (IP, email, otherName…): the path is refused, since it cannot be checked. */
  | { type: 'unsupported'; form: string }

export interface CertificateFacts {
  /** basicConstraints cA (RFC 5280 §4.2.1.9); false without the extension. */
  ca: boolean
  /** basicConstraints pathLenConstraint; undefined: no limit. */
  pathLength: number | undefined
  /** keyUsage (RFC 5280 §4.2.1.3); undefined without the extension. */
  keyUsage: { keyCertSign: boolean; digitalSignature: boolean } | undefined
  /** extKeyUsage purposes (RFC 5280 §4.2.1.12); undefined without the extension. */
  extendedKeyUsage: string[] | undefined
  /** subjectAltName dNSName and uniformResourceIdentifier entries. */
  dnsNames: string[]
  uris: string[]
  /** The subject's RDNs, each as canonical JSON, for directoryName subtrees. */
  subjectRdns: string[]
  nameConstraints: { permitted: Subtree[]; excluded: Subtree[] } | undefined
  /** OIDs of critical extensions path validation does not process. */
  unknownCritical: string[]
  /** The signature algorithm, e.g. `ECDSA SHA-256`, and whether it is allowed. */
  signatureAlgorithm: { name: string; allowed: boolean }
  /** subjectKeyIdentifier (RFC 5280 §4.2.1.2), base64url; undefined without the extension. */
  subjectKeyId: string | undefined
  /** The keyIdentifier of authorityKeyIdentifier (RFC 5280 §4.2.1.1), base64url, as DCQL `aki` names it. */
  authorityKeyId: string | undefined
}

const factsOf = new WeakMap<object, CertificateFacts>()

/**
 * What path validation needs from a certificate's extensions and signature algorithm (node:crypto
 * shows none of it), read with @peculiar/x509 once per certificate object: the same anchors and
 * issuer certificates come back with every presentation (parseCertificate caches the objects).
 */
export async function certificateFacts(certificate: { raw: Uint8Array }): Promise<CertificateFacts> {
  const known = factsOf.get(certificate)
  if (known) return known
  const x509 = await loadX509()
  const parsed = new x509.X509Certificate(certificate.raw)
  const basic = parsed.getExtension(x509.BasicConstraintsExtension)
  const usage = parsed.getExtension(x509.KeyUsagesExtension)
  const eku = parsed.getExtension(x509.ExtendedKeyUsageExtension)
  const san = parsed.getExtension(x509.SubjectAlternativeNameExtension)
  const constraints = parsed.getExtension(OID.nameConstraints)
  const ski = parsed.getExtension(x509.SubjectKeyIdentifierExtension)
  const aki = parsed.getExtension(x509.AuthorityKeyIdentifierExtension)
  const names = san?.names.items ?? []
  const facts: CertificateFacts = {
    ca: basic?.ca ?? false,
    pathLength: basic?.ca ? basic.pathLength : undefined,
    keyUsage: usage
      ? {
          keyCertSign: (usage.usages & x509.KeyUsageFlags.keyCertSign) !== 0,
          digitalSignature: (usage.usages & x509.KeyUsageFlags.digitalSignature) !== 0,
        }
      : undefined,
    extendedKeyUsage: eku ? eku.usages.map(String) : undefined,
    dnsNames: names.filter((name) => name.type === 'dns').map((name) => name.value),
    uris: names.filter((name) => name.type === 'url').map((name) => name.value),
    subjectRdns: rdnsOf(parsed.subjectName),
    nameConstraints: constraints ? nameConstraintsOf(x509, new Uint8Array(constraints.value)) : undefined,
    unknownCritical: parsed.extensions
      .filter((extension) => extension.critical && !UNDERSTOOD.has(extension.type))
      .map((extension) => extension.type),
    signatureAlgorithm: signatureAlgorithmOf(parsed),
    subjectKeyId: ski ? hexToBase64url(ski.keyId) : undefined,
    authorityKeyId: aki?.keyId ? hexToBase64url(aki.keyId) : undefined,
  }
  factsOf.set(certificate, facts)
  return facts
}

const hexToBase64url = (hex: string) => Buffer.from(hex, 'hex').toString('base64url')

const rdnsOf = (name: X509.Name) => name.toJSON().map((rdn) => JSON.stringify(rdn))

const STRONG_HASHES = new Set(['SHA-256', 'SHA-384', 'SHA-512'])

/** ECDSA, RSA PKCS#1 v1.5 or PSS with SHA-2, or Ed25519; never SHA-1 or MD5 (collisions). */
function signatureAlgorithmOf(certificate: X509.X509Certificate): { name: string; allowed: boolean } {
  let algorithm: { name: string; hash?: { name: string } }
  try {
    algorithm = certificate.signatureAlgorithm as typeof algorithm
  } catch {
    return { name: 'unknown', allowed: false }
  }
  const hash = algorithm.hash?.name
  const name = hash ? `${algorithm.name} ${hash}` : algorithm.name
  if (algorithm.name === 'Ed25519') return { name, allowed: true }
  const family = ['ECDSA', 'RSASSA-PKCS1-v1_5', 'RSA-PSS'].includes(algorithm.name)
  return { name, allowed: family && hash !== undefined && STRONG_HASHES.has(hash) }
}

/** One DER TLV: its tag, and where its content starts and ends (X.690 §8.1). */
function readTlv(bytes: Uint8Array, offset: number): { tag: number; start: number; end: number } {
  const tag = bytes[offset] ?? 0
  let length = bytes[offset + 1] ?? 0
  let start = offset + 2
  if (length & 0x80) {
    const count = length & 0x7f
    length = 0
    for (let index = 0; index < count; index++) length = length * 256 + (bytes[start + index] ?? 0)
    start += count
  }
  const end = start + length
  if (end > bytes.length) throw new Error('truncated DER')
  return { tag, start, end }
}

/** The TLVs inside a constructed value. */
function children(bytes: Uint8Array, start: number, end: number) {
  const items: { tag: number; start: number; end: number; raw: Uint8Array }[] = []
  for (let offset = start; offset < end; ) {
    const item = readTlv(bytes, offset)
    items.push({ ...item, raw: bytes.subarray(offset, item.end) })
    offset = item.end
  }
  return items
}

/**
 * NameConstraints ::= SEQUENCE { permittedSubtrees [0] GeneralSubtrees OPTIONAL, excludedSubtrees
 * [1] GeneralSubtrees OPTIONAL }, GeneralSubtree ::= SEQUENCE { base GeneralName, … } (RFC 5280
 * §4.2.1.10). @peculiar/x509 has no class for it; the DER is small enough to walk here.
 */
function nameConstraintsOf(x509: typeof X509, der: Uint8Array) {
  const result = { permitted: [] as Subtree[], excluded: [] as Subtree[] }
  try {
    readSubtrees(x509, der, result)
  } catch {
    result.permitted.push({ type: 'unsupported', form: 'unreadable' })
  }
  return result
}

function readSubtrees(
  x509: typeof X509,
  der: Uint8Array,
  result: { permitted: Subtree[]; excluded: Subtree[] },
) {
  const outer = readTlv(der, 0)
  for (const trees of children(der, outer.start, outer.end)) {
    const list = trees.tag === 0xa0 ? result.permitted : trees.tag === 0xa1 ? result.excluded : undefined
    if (!list) continue
    for (const subtree of children(der, trees.start, trees.end)) {
      const [base] = children(der, subtree.start, subtree.end)
      if (base) list.push(subtreeOf(x509, base.raw))
    }
  }
}

function subtreeOf(x509: typeof X509, raw: Uint8Array): Subtree {
  try {
    const name = new x509.GeneralName(raw)
    if (name.type === 'dns' || name.type === 'url') return { type: name.type, value: name.value }
    if (name.type === 'dn') return { type: 'dn', rdns: rdnsOf(new x509.Name(name.value)) }
    return { type: 'unsupported', form: name.type }
  } catch {
    return { type: 'unsupported', form: 'unreadable' }
  }
}
