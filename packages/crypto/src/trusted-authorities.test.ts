import { createHash, type X509Certificate } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { issueTestCertificate } from './testing'
import { anchorAuthorityKeyId, anchorAuthorityKeyIds, trustedAuthoritiesRefusal } from './trusted-authorities'

/** RFC 5280 §4.2.1.2 method (1) for a P-256 key, computed apart from the code under test. */
const keyIdOf = (certificate: X509Certificate) =>
  createHash('sha1')
    .update(certificate.publicKey.export({ type: 'spki', format: 'der' }).subarray(-65))
    .digest('base64url')

describe('DCQL aki matching (OpenID4VP 1.0 §6.1.1.1, V-10)', async () => {
  const root = await issueTestCertificate({ subject: 'CN=Root A', ca: true })
  const intermediate = await issueTestCertificate({ subject: 'CN=Intermediate A', issuer: root, ca: true })
  const leaf = await issueTestCertificate({ subject: 'CN=Leaf A', issuer: intermediate })
  const other = await issueTestCertificate({ subject: 'CN=Root B', ca: true })
  const otherLeaf = await issueTestCertificate({ subject: 'CN=Leaf B', issuer: other })
  const aki = (values: string[]) => [{ type: 'aki', values }]

  it('a chain matches when any of its certificates names the authority, whatever part of the chain is sent', async () => {
    const akiRoot = keyIdOf(root.certificate)
    const akiIntermediate = keyIdOf(intermediate.certificate)
    // [leaf, intermediate]: the intermediate names the root; the leaf names the intermediate.
    const full = [leaf.certificate, intermediate.certificate]
    expect(await trustedAuthoritiesRefusal(full, aki([akiRoot]))).toBeUndefined()
    expect(await trustedAuthoritiesRefusal(full, aki([akiIntermediate]))).toBeUndefined()
    // The leaf alone names only the intermediate.
    expect(await trustedAuthoritiesRefusal([leaf.certificate], aki([akiIntermediate]))).toBeUndefined()
    expect(await trustedAuthoritiesRefusal([leaf.certificate], aki([akiRoot]))).toBe(
      `no certificate of the x5c chain has an authority key identifier the query's trusted_authorities name (aki ${akiRoot})`,
    )
  })

  it('a chain under another authority is refused; one matching value of several is enough', async () => {
    const akiRoot = keyIdOf(root.certificate)
    const chain = [otherLeaf.certificate]
    expect(await trustedAuthoritiesRefusal(chain, aki([akiRoot]), 'x5chain')).toContain('x5chain')
    expect(await trustedAuthoritiesRefusal(chain, aki([akiRoot, keyIdOf(other.certificate)]))).toBeUndefined()
    // No query: nothing to match. Only aki is evaluated (other types are refused at save).
    expect(await trustedAuthoritiesRefusal(chain, undefined)).toBeUndefined()
    expect(
      await trustedAuthoritiesRefusal(chain, [{ type: 'etsi_tl', values: [keyIdOf(other.certificate)] }]),
    ).toBeDefined()
  })

  it('an anchor is named by what its chains carry: a CA by its subject key id, a leaf by its authority key id', async () => {
    expect(await anchorAuthorityKeyId(root.certificate)).toBe(keyIdOf(root.certificate))
    expect(await anchorAuthorityKeyId(leaf.certificate)).toBe(keyIdOf(intermediate.certificate))
    expect(
      await anchorAuthorityKeyIds([root.certificate, other.certificate, root.certificate]),
    ).toStrictEqual([keyIdOf(root.certificate), keyIdOf(other.certificate)])
  })

  it('OpenID4VP 1.0 §6.1.1.2 etsi_tl: a chain that validates to a current certificate of the named list matches; another, or a list failing closed, does not', async () => {
    const url = 'https://tl.example.com/tl.xml'
    const now = new Date()
    const etsi = [{ type: 'etsi_tl', values: [url] }]
    const lists = (anchors: X509Certificate[], unusable?: string) => ({
      byUrl: new Map([[url, { anchors, unusable }]]),
      now,
    })
    const full = [leaf.certificate, intermediate.certificate]
    expect(await trustedAuthoritiesRefusal(full, etsi, 'x5c', lists([root.certificate]))).toBeUndefined()
    expect(await trustedAuthoritiesRefusal(full, etsi, 'x5c', lists([other.certificate]))).toBe(
      `the x5c chain matches none of the query's trusted_authorities (OpenID4VP 1.0 §6.1.1): the issuer does not chain to a current certificate of the trusted list ${url}`,
    )
    expect(
      await trustedAuthoritiesRefusal(full, etsi, 'x5c', lists([], "'pids' past NextUpdate + grace")),
    ).toContain(
      `the trusted list ${url} is 'pids' past NextUpdate + grace and contributes no certificates (fail closed)`,
    )
    expect(await trustedAuthoritiesRefusal(full, etsi)).toContain(
      `etsi_tl ${url} is not a trusted list of this configuration`,
    )
    // Any one authority is enough: the aki of another root, or the list.
    const both = [...aki([keyIdOf(other.certificate)]), ...etsi]
    expect(await trustedAuthoritiesRefusal(full, both, 'x5c', lists([root.certificate]))).toBeUndefined()
    expect(
      await trustedAuthoritiesRefusal([otherLeaf.certificate], both, 'x5c', lists([root.certificate])),
    ).toBeUndefined()
  })
})
