import { X509Certificate } from 'node:crypto'
import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import type { TrustListRow } from '@credential-service/db-schema'
import { describe, expect, it } from 'vitest'
import { trustedProviderOf, walletProviderTrust } from './attestation-trust'

const NOW = new Date('2026-03-01T00:00:00Z')
const DAY = 86_400_000

type Keys = Awaited<ReturnType<typeof generateKeyPair>>
interface Issued {
  keys: Keys
  pem: string
  subject: string
}

/** A certificate for fresh keys (or `keys`), signed by `issuer` or by itself. */
async function issue(
  subject: string,
  options: {
    issuer?: Issued
    keys?: Keys
    ca?: boolean
    pathLength?: number
    /** Issued this many days before NOW (valid 30 days from then). */
    daysAgo?: number
  } = {},
): Promise<Issued> {
  const keys = options.keys ?? (await generateKeyPair('ES256'))
  const pem = await createCertificate({
    subjectPublicJwk: keys.publicJwk,
    subject,
    issuerPrivateJwk: (options.issuer?.keys ?? keys).privateJwk,
    ...(options.issuer ? { issuerCertificate: options.issuer.pem } : {}),
    validityDays: 30,
    now: new Date(NOW.getTime() - (options.daysAgo ?? 0) * DAY),
    ...(options.ca ? { ca: true, pathLength: options.pathLength ?? 0 } : {}),
  })
  return { keys, pem, subject }
}

const chainOf = (...issued: Issued[]) => issued.map(({ pem }) => new X509Certificate(pem))
const trust = (...anchors: Issued[]) => [
  { id: 'other', trustAnchors: [] },
  { id: 'acme', trustAnchors: anchors.map(({ pem }) => pem) },
]

describe('attestation x5c path validation (RFC 5280 §6.1; HAIP §4.5.1; ABCA §5.1; checklist I-48, I-65, S-60, S-65)', async () => {
  const root = await issue('CN=Root', { ca: true, pathLength: 1 })
  const intermediate = await issue('CN=Intermediate', { issuer: root, ca: true })
  const leaf = await issue('CN=Attester', { issuer: intermediate })
  const directLeaf = await issue('CN=Direct Attester', { issuer: root })

  it('a leaf issued by the anchor, and a leaf under an intermediate CA, chain to the provider', async () => {
    expect(await trustedProviderOf(chainOf(directLeaf), trust(root), NOW)).toBe('acme')
    expect(await trustedProviderOf(chainOf(leaf, intermediate), trust(root), NOW)).toBe('acme')
  })

  it('RFC 5280 §4.2.1.9: an intermediate without basicConstraints cA is refused', async () => {
    const notCa = await issue('CN=Not a CA', { issuer: root })
    const below = await issue('CN=Attester', { issuer: notCa })
    await expect(trustedProviderOf(chainOf(below, notCa), trust(root), NOW)).rejects.toThrow(
      'x5c certificate 1 is not a CA (basicConstraints cA)',
    )
  })

  it('RFC 5280 §4.2.1.9: an anchor without cA does not issue; its pathLenConstraint bounds the intermediates', async () => {
    const leafAnchor = await issue('CN=Leaf Anchor', {})
    const under = await issue('CN=Attester', { issuer: leafAnchor })
    await expect(trustedProviderOf(chainOf(under), trust(leafAnchor), NOW)).rejects.toThrow(
      'the trust anchor is not a CA (basicConstraints cA)',
    )
    const strictRoot = await issue('CN=Strict Root', { ca: true, pathLength: 0 })
    const middle = await issue('CN=Middle', { issuer: strictRoot, ca: true })
    const attester = await issue('CN=Attester', { issuer: middle })
    await expect(trustedProviderOf(chainOf(attester, middle), trust(strictRoot), NOW)).rejects.toThrow(
      'the trust anchor allows 0 intermediate certificates below it (pathLenConstraint), not 1',
    )
    const second = await issue('CN=Second', { issuer: intermediate, ca: true })
    const deep = await issue('CN=Attester', { issuer: second })
    await expect(trustedProviderOf(chainOf(deep, second, intermediate), trust(root), NOW)).rejects.toThrow(
      'x5c certificate 2 allows 0 intermediate certificates below it (pathLenConstraint), not 1',
    )
  })

  it('RFC 5280 §6.1.3: an expired or not yet valid leaf, intermediate or anchor is refused', async () => {
    const old = await issue('CN=Old', { issuer: intermediate, daysAgo: 40 })
    await expect(trustedProviderOf(chainOf(old, intermediate), trust(root), NOW)).rejects.toThrow(
      'x5c certificate 0 is expired or not yet valid',
    )
    const early = await issue('CN=Early', { issuer: intermediate, daysAgo: -2 })
    await expect(trustedProviderOf(chainOf(early, intermediate), trust(root), NOW)).rejects.toThrow(
      'x5c certificate 0 is expired or not yet valid',
    )
    const oldIntermediate = await issue('CN=Old Intermediate', { issuer: root, ca: true, daysAgo: 40 })
    const underOld = await issue('CN=Attester', { issuer: oldIntermediate })
    await expect(trustedProviderOf(chainOf(underOld, oldIntermediate), trust(root), NOW)).rejects.toThrow(
      'x5c certificate 1 is expired or not yet valid',
    )
    const oldRoot = await issue('CN=Old Root', { ca: true, daysAgo: 40 })
    const underOldRoot = await issue('CN=Attester', { issuer: oldRoot, daysAgo: 20 })
    await expect(trustedProviderOf(chainOf(underOldRoot), trust(oldRoot), NOW)).rejects.toThrow(
      'the trust anchor is expired or not yet valid',
    )
  })

  it('HAIP §4.5.1: a self-signed leaf is refused, also a copy of the anchor (same key and subject, new serial)', async () => {
    const copy = await issue(root.subject, { keys: root.keys, ca: true, pathLength: 1 })
    expect(new X509Certificate(copy.pem).serialNumber).not.toBe(new X509Certificate(root.pem).serialNumber)
    await expect(trustedProviderOf(chainOf(copy), trust(root), NOW)).rejects.toThrow(
      'the x5c leaf is self-signed',
    )
    // A leaf profile (keyUsage digitalSignature only) that node's checkIssued would not see as self-issued.
    const plainCopy = await issue(root.subject, { keys: root.keys })
    await expect(trustedProviderOf(chainOf(plainCopy), trust(root), NOW)).rejects.toThrow(
      'the x5c leaf is self-signed',
    )
  })

  it('the anchor in x5c, a broken link, an untrusted chain and a leaf that may not sign are refused', async () => {
    await expect(trustedProviderOf(chainOf(directLeaf, root), trust(root), NOW)).rejects.toThrow(
      'x5c must not contain the trust anchor',
    )
    const stranger = await issue('CN=Intermediate', { issuer: root, ca: true })
    await expect(trustedProviderOf(chainOf(leaf, stranger), trust(root), NOW)).rejects.toThrow(
      'x5c certificate 0 is not issued by certificate 1',
    )
    const otherRoot = await issue('CN=Root', { ca: true })
    await expect(trustedProviderOf(chainOf(directLeaf), trust(otherRoot), NOW)).rejects.toThrow(
      'x5c does not chain to a trusted wallet provider',
    )
    const caLeaf = await issue('CN=CA as leaf', { issuer: root, ca: true })
    await expect(trustedProviderOf(chainOf(caLeaf), trust(root), NOW)).rejects.toThrow(
      'the x5c leaf may not sign (keyUsage without digitalSignature)',
    )
  })
})

describe('wallet providers trusted through trust lists (docs/trust-lists.md)', async () => {
  const root = await issue('CN=Listed Root', { ca: true, pathLength: 1 })
  const leaf = await issue('CN=Listed Attester', { issuer: root })
  /** A fetched list holding `root`, whose NextUpdate is `nextUpdate` (grace 0). */
  const fetched = (id: string, nextUpdate: Date): TrustListRow => ({
    tenantId: 't',
    id,
    description: null,
    source: {
      type: 'etsi-tl',
      url: 'https://lists.example/tl.xml',
      signerCertificates: [],
      refreshSeconds: 3600,
    },
    graceSeconds: 0,
    certificates: [root.pem],
    listIssuedAt: new Date(NOW.getTime() - DAY),
    nextUpdate,
    fetchedAt: new Date(NOW.getTime() - DAY),
    lastError: null,
    lastErrorAt: null,
    nextRefreshAt: NOW,
    createdAt: NOW,
    updatedAt: NOW,
  })
  const providers = [{ id: 'other' }, { id: 'listed', trustListIds: ['wallets'] }]

  it('issue 25: a current list’s certificates are the provider’s anchors (no trustAnchors of its own)', async () => {
    const lists = [fetched('wallets', new Date(NOW.getTime() + DAY))]
    const trust = walletProviderTrust(providers, lists, NOW)
    expect(trust[1]).toStrictEqual({ id: 'listed', trustAnchors: [root.pem], unusableTrustLists: [] })
    expect(await trustedProviderOf(chainOf(leaf), trust, NOW)).toBe('listed')
  })

  it('fail closed: a list past NextUpdate + grace contributes nothing, and the refusal names it', async () => {
    const lists = [fetched('wallets', new Date(NOW.getTime() - 1000))]
    const trust = walletProviderTrust(providers, lists, NOW)
    expect(trust[1]?.trustAnchors).toStrictEqual([])
    await expect(trustedProviderOf(chainOf(leaf), trust, NOW)).rejects.toThrow(
      "x5c does not chain to a trusted wallet provider; trust list(s) 'wallets' (past NextUpdate + grace) contribute no certificates (fail closed)",
    )
  })

  it('a provider no longer naming the list does not trust its certificates', async () => {
    const lists = [fetched('wallets', new Date(NOW.getTime() + DAY))]
    const trust = walletProviderTrust([{ id: 'listed' }], lists, NOW)
    await expect(trustedProviderOf(chainOf(leaf), trust, NOW)).rejects.toThrow(
      'x5c does not chain to a trusted wallet provider',
    )
  })
})
