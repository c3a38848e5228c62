import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MDL_DOCUMENT_SIGNER_EKU } from '../src/certificate-facts'
import {
  ATTESTATION_PROFILE,
  ISSUER_PROFILE,
  MDOC_ISSUER_PROFILE,
  type PathProfile,
  validatePath,
} from '../src/path-validation'
import {
  issueTestCertificate,
  nameConstraintsDer,
  type TestCertificate,
  type TestCertificateOptions,
  type TestSubtree,
} from '../src/testing'

const OPENSSL = '/usr/bin/openssl'
const hasOpenssl = existsSync(OPENSSL) && spawnSync(OPENSSL, ['version']).status === 0
const NOW = new Date()
const DAY = 86_400_000

/** `openssl verify` of the same chain: root as -CAfile, the rest but the leaf as -untrusted. */
function opensslAccepts(chain: TestCertificate[], root: TestCertificate): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'path-validation-'))
  const write = (name: string, certificates: TestCertificate[]) => {
    writeFileSync(join(dir, name), certificates.map(({ pem }) => pem).join('\n'))
    return join(dir, name)
  }
  const [leaf, ...rest] = chain
  const args = [
    'verify',
    '-CAfile',
    write('root.pem', [root]),
    '-attime',
    String(Math.floor(NOW.getTime() / 1000)),
  ]
  const untrusted = rest.filter((certificate) => certificate !== root)
  if (untrusted.length) args.push('-untrusted', write('untrusted.pem', untrusted))
  args.push(write('leaf.pem', [leaf as TestCertificate]))
  try {
    execFileSync(OPENSSL, args, { stdio: 'pipe' })
    return true
  } catch {
    return false
  }
}

const verdictFor = (chain: TestCertificate[], root: TestCertificate, profile: PathProfile) =>
  validatePath({
    chain: chain.map(({ certificate }) => certificate),
    anchors: [root.certificate],
    now: NOW,
    profile,
  })

/** The profiles of issuer chains: SD-JWT VC issuers and status list signers, mdoc issuers, attestations. */
const PROFILES = [
  { name: 'SD-JWT VC issuer and status list signer', profile: ISSUER_PROFILE },
  { name: 'mdoc issuer', profile: MDOC_ISSUER_PROFILE },
  { name: 'wallet and key attestation', profile: ATTESTATION_PROFILE },
]

describe.each(PROFILES)('RFC 5280 §6.1 path validation, $name (checklist S-127)', async ({ profile }) => {
  const verdict = (chain: TestCertificate[], root: TestCertificate, other: PathProfile = profile) =>
    verdictFor(chain, root, other)
  /** Our verdict, and openssl's on the same chain when openssl is installed. */
  const expectRefused = async (chain: TestCertificate[], root: TestCertificate, reason: string) => {
    expect(await verdict(chain, root)).toStrictEqual({ valid: false, reason })
    if (hasOpenssl) expect(opensslAccepts(chain, root)).toBe(false)
  }
  // Leaves are Document Signers, so that under every profile a case reaches the rule it is about.
  const issueLeaf = (options: TestCertificateOptions) =>
    issueTestCertificate({ ...options, extendedKeyUsage: [MDL_DOCUMENT_SIGNER_EKU] })
  const root = await issueTestCertificate({ subject: 'CN=Root', ca: true, pathLength: 1 })
  const intermediate = await issueTestCertificate({
    subject: 'CN=Intermediate',
    issuer: root,
    ca: true,
    pathLength: 0,
  })
  const leaf = await issueLeaf({ subject: 'CN=Issuer', issuer: intermediate })

  it('RFC 5280 §6.1: root → intermediate CA with pathLenConstraint → leaf is valid, as openssl says', async () => {
    expect(await verdict([leaf, intermediate], root)).toStrictEqual({ valid: true, anchor: root.certificate })
    if (hasOpenssl) expect(opensslAccepts([leaf, intermediate], root)).toBe(true)
  })

  it('RFC 5280 §4.2.1.9, S-127: a leaf that signs another leaf is not a CA', async () => {
    const ordinary = await issueTestCertificate({ subject: 'CN=Ordinary', issuer: root })
    const evil = await issueLeaf({ subject: 'CN=Evil', issuer: ordinary })
    await expectRefused([evil, ordinary], root, 'x5c certificate 1 is not a CA (basicConstraints cA)')
  })

  it('RFC 5280 §4.2.1.9, S-127: an intermediate beyond the root’s pathLenConstraint 0 is refused', async () => {
    const strict = await issueTestCertificate({ subject: 'CN=Strict Root', ca: true, pathLength: 0 })
    const middle = await issueTestCertificate({ subject: 'CN=Middle', issuer: strict, ca: true })
    const below = await issueLeaf({ subject: 'CN=Issuer', issuer: middle })
    await expectRefused(
      [below, middle],
      strict,
      'the trust anchor allows 0 intermediate certificates below it (pathLenConstraint), not 1',
    )
  })

  it('RFC 5280 §4.2.1.3: an intermediate CA without keyCertSign is refused', async () => {
    const noSign = await issueTestCertificate({
      subject: 'CN=No keyCertSign',
      issuer: root,
      ca: true,
      keyUsage: ['digitalSignature'],
    })
    const below = await issueLeaf({ subject: 'CN=Issuer', issuer: noSign })
    await expectRefused(
      [below, noSign],
      root,
      'x5c certificate 1 may not sign certificates (keyUsage keyCertSign)',
    )
  })

  it('RFC 5280 §4.2: an unknown critical extension is refused', async () => {
    const odd = await issueLeaf({
      subject: 'CN=Odd',
      issuer: intermediate,
      extensions: [{ oid: '1.3.6.1.4.1.55555.1', critical: true, value: Uint8Array.of(0x05, 0x00) }],
    })
    await expectRefused(
      [odd, intermediate],
      root,
      'x5c certificate 0 has a critical extension this service does not process (1.3.6.1.4.1.55555.1)',
    )
  })

  it('RFC 5280 §6.1.3 (a)(2): an expired intermediate is refused', async () => {
    const old = await issueTestCertificate({
      subject: 'CN=Old Intermediate',
      issuer: root,
      ca: true,
      notBefore: new Date(NOW.getTime() - 60 * DAY),
      notAfter: new Date(NOW.getTime() - DAY),
    })
    const below = await issueLeaf({ subject: 'CN=Issuer', issuer: old })
    await expectRefused([below, old], root, 'x5c certificate 1 is expired or not yet valid')
  })

  it('ISO 18013-5 Annex B.1.4, S-132: an mdoc issuer leaf needs the document signer EKU', async () => {
    const plain = await issueTestCertificate({ subject: 'CN=Plain', issuer: intermediate })
    expect(await verdict([plain, intermediate], root, MDOC_ISSUER_PROFILE)).toStrictEqual({
      valid: false,
      reason: `the x5c leaf lacks the extended key usage ${MDL_DOCUMENT_SIGNER_EKU}`,
    })
    expect(await verdict([leaf, intermediate], root, MDOC_ISSUER_PROFILE)).toMatchObject({ valid: true })
    expect(await verdict([plain, intermediate], root, ISSUER_PROFILE)).toMatchObject({ valid: true })
  })

  it('RFC 5280 §4.2.1.12: a profile EKU "where set" binds only leaves that carry an extKeyUsage', async () => {
    const statusSigner: PathProfile = { ekuWhereSet: '1.3.6.1.5.5.7.3.99' }
    const plain = await issueTestCertificate({ subject: 'CN=Plain', issuer: intermediate })
    expect(await verdict([plain, intermediate], root, statusSigner)).toMatchObject({ valid: true })
    expect(await verdict([leaf, intermediate], root, statusSigner)).toStrictEqual({
      valid: false,
      reason: 'the x5c leaf lacks the extended key usage 1.3.6.1.5.5.7.3.99',
    })
  })

  it('HAIP §4.5.1: the root inside x5c is accepted for issuers, refused for attestations', async () => {
    expect(await verdict([leaf, intermediate, root], root, ISSUER_PROFILE)).toStrictEqual({
      valid: true,
      anchor: root.certificate,
    })
    expect(await verdict([leaf, intermediate, root], root, ATTESTATION_PROFILE)).toStrictEqual({
      valid: false,
      reason: 'x5c must not contain the trust anchor',
    })
    if (hasOpenssl) expect(opensslAccepts([leaf, intermediate, root], root)).toBe(true)
  })

  it('RFC 5280 §4.1.1.2: a SHA-1 signature is refused', async () => {
    const weak = await issueLeaf({ subject: 'CN=Weak', issuer: intermediate, hash: 'SHA-1' })
    expect(await verdict([weak, intermediate], root)).toStrictEqual({
      valid: false,
      reason: 'x5c certificate 0 is signed with ECDSA SHA-1, which is not allowed',
    })
  })

  it('RFC 5280 §4.2.1.10: dNSName constraints of a CA bind the names below it', async () => {
    const constrained = await issueTestCertificate({
      subject: 'CN=Constrained',
      issuer: root,
      ca: true,
      extensions: [
        { oid: '2.5.29.30', critical: true, value: await nameConstraintsDer([{ dns: 'example.com' }]) },
      ],
    })
    const inside = await issueLeaf({
      subject: 'CN=In',
      issuer: constrained,
      dnsNames: ['a.example.com'],
    })
    expect(await verdict([inside, constrained], root)).toMatchObject({ valid: true })
    if (hasOpenssl) expect(opensslAccepts([inside, constrained], root)).toBe(true)
    const outside = await issueLeaf({
      subject: 'CN=Out',
      issuer: constrained,
      dnsNames: ['evil.org'],
    })
    await expectRefused(
      [outside, constrained],
      root,
      'x5c certificate 1 has name constraints that do not permit evil.org',
    )
  })

  it('RFC 5280 §4.2.1.10: URI and directoryName subtrees bind, an unchecked form (IP) refuses', async () => {
    const constrainedBy = async (permitted: TestSubtree[], excluded: TestSubtree[] = []) =>
      issueTestCertificate({
        subject: 'CN=Constrained,O=ACME',
        issuer: root,
        ca: true,
        extensions: [
          { oid: '2.5.29.30', critical: true, value: await nameConstraintsDer(permitted, excluded) },
        ],
      })
    const byUri = await constrainedBy([{ uri: '.example.com' }])
    const web = await issueLeaf({ subject: 'CN=Web', issuer: byUri, uris: ['https://issuer.example.com/a'] })
    expect(await verdict([web, byUri], root)).toMatchObject({ valid: true })
    const elsewhere = await issueLeaf({ subject: 'CN=Web', issuer: byUri, uris: ['https://evil.org/a'] })
    await expectRefused(
      [elsewhere, byUri],
      root,
      'x5c certificate 1 has name constraints that do not permit https://evil.org/a',
    )
    const byName = await constrainedBy([], [{ dn: 'O=Evil' }])
    const acme = await issueLeaf({ subject: 'O=ACME,CN=Issuer', issuer: byName })
    expect(await verdict([acme, byName], root)).toMatchObject({ valid: true })
    const evil = await issueLeaf({ subject: 'O=Evil,CN=Issuer', issuer: byName })
    const refused = await verdict([evil, byName], root)
    expect(refused).toMatchObject({ valid: false })
    expect((refused as { reason: string }).reason).toMatch(
      /^x5c certificate 1 has name constraints that exclude /,
    )
    if (hasOpenssl) expect(opensslAccepts([evil, byName], root)).toBe(false)
    const byIp = await constrainedBy([{ ip: ['10.0.0.0', '255.0.0.0'] }])
    const anyone = await issueLeaf({ subject: 'CN=Any', issuer: byIp })
    expect(await verdict([anyone, byIp], root)).toStrictEqual({
      valid: false,
      reason: 'x5c certificate 1 has name constraints that use a form this service does not check (ip)',
    })
  })

  it('a chain of more than 10 certificates, a broken link and an unknown root are refused', async () => {
    expect(await verdict(Array(11).fill(leaf), root)).toStrictEqual({
      valid: false,
      reason: 'x5c has more than 10 certificates',
    })
    const stranger = await issueTestCertificate({ subject: 'CN=Intermediate', issuer: root, ca: true })
    await expectRefused(
      [leaf, stranger],
      root,
      'x5c certificate 0 is not issued by certificate 1 (signature)',
    )
    const other = await issueTestCertificate({ subject: 'CN=Root', ca: true })
    expect(await verdict([leaf, intermediate], other)).toStrictEqual({
      valid: false,
      reason: 'x5c does not chain to a trust anchor',
      untrusted: true,
    })
  })
})
