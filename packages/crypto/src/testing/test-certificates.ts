import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto'
import { loadX509 } from '../certificate-facts'
import { signWithKeyObject } from '../key-chain-signer'
import { generateKeyPair, type KeyPairJwks, publicPart } from '../keys'
import type { Signer } from '../signer'

/** A certificate made by issueTestCertificate, with its keys. */
export interface TestCertificate {
  keys: KeyPairJwks
  pem: string
  /** Base64 DER, an `x5c` entry. */
  der: string
  certificate: X509Certificate
}

export interface TestCertificateOptions {
  subject: string
  /** Signed by this certificate's key; absent: self-signed. */
  issuer?: TestCertificate
  /** Reuse keys (a copy of another certificate); absent: a fresh P-256 key. */
  keys?: KeyPairJwks
  ca?: boolean
  /** basicConstraints pathLenConstraint of a CA; absent: no limit. */
  pathLength?: number
  /** keyUsage; absent: keyCertSign + cRLSign for a CA, digitalSignature otherwise; `none`: no extension. */
  keyUsage?: Array<'digitalSignature' | 'keyCertSign' | 'cRLSign'> | 'none'
  extendedKeyUsage?: string[]
  dnsNames?: string[]
  uris?: string[]
  notBefore?: Date
  notAfter?: Date
  /** Extra extensions, e.g. an unknown critical one: DER value bytes. */
  extensions?: Array<{ oid: string; critical: boolean; value: Uint8Array }>
  /** Signature hash; SHA-1 to test that weak algorithms are refused. */
  hash?: 'SHA-1' | 'SHA-256' | 'SHA-384'
}

const DAY = 86_400_000

/**
 * A test certificate with any profile, valid or not (what createCertificate never makes: a leaf
 * that signs others, unknown critical extensions, SHA-1), for chains that path validation refuses.
 */
export async function issueTestCertificate(options: TestCertificateOptions): Promise<TestCertificate> {
  const x509 = await loadX509()
  const keys = options.keys ?? (await generateKeyPair('ES256'))
  const signer = options.issuer?.keys ?? keys
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256' }
  const signingKey = await webcrypto.subtle.importKey(
    'jwk',
    signer.privateJwk as webcrypto.JsonWebKey,
    algorithm,
    false,
    ['sign'],
  )
  const publicKey = await webcrypto.subtle.importKey(
    'jwk',
    publicPart(keys.publicJwk) as webcrypto.JsonWebKey,
    algorithm,
    true,
    ['verify'],
  )
  const usages = options.keyUsage ?? (options.ca ? ['keyCertSign', 'cRLSign'] : ['digitalSignature'])
  const extensions: InstanceType<typeof x509.Extension>[] = [
    new x509.BasicConstraintsExtension(
      options.ca ?? false,
      options.ca ? options.pathLength : undefined,
      true,
    ),
    await x509.SubjectKeyIdentifierExtension.create(publicKey, false, webcrypto),
  ]
  // RFC 5280 §4.2.1.1: issued certificates name their issuer's key, as real CAs do (DCQL `aki`).
  if (options.issuer)
    extensions.push(
      await x509.AuthorityKeyIdentifierExtension.create(
        await webcrypto.subtle.importKey(
          'jwk',
          publicPart(options.issuer.keys.publicJwk) as webcrypto.JsonWebKey,
          algorithm,
          true,
          ['verify'],
        ),
        false,
        webcrypto,
      ),
    )
  if (usages !== 'none')
    extensions.push(
      new x509.KeyUsagesExtension(
        usages.reduce((flags, usage) => flags | x509.KeyUsageFlags[usage], 0),
        true,
      ),
    )
  if (options.extendedKeyUsage)
    extensions.push(new x509.ExtendedKeyUsageExtension(options.extendedKeyUsage, true))
  const altNames = [
    ...(options.uris ?? []).map((value) => ({ type: 'url' as const, value })),
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
  ]
  if (altNames.length) extensions.push(new x509.SubjectAlternativeNameExtension(altNames))
  for (const { oid, critical, value } of options.extensions ?? [])
    extensions.push(new x509.Extension(oid, critical, value))
  const notBefore = options.notBefore ?? new Date(Date.now() - DAY)
  const generated = await x509.X509CertificateGenerator.create(
    {
      serialNumber: `01${Buffer.from(webcrypto.getRandomValues(new Uint8Array(8))).toString('hex')}`,
      subject: options.subject,
      issuer: options.issuer ? new x509.X509Certificate(options.issuer.pem).subject : options.subject,
      notBefore,
      notAfter: options.notAfter ?? new Date(notBefore.getTime() + 30 * DAY),
      publicKey,
      signingKey,
      signingAlgorithm: { name: 'ECDSA', hash: options.hash ?? 'SHA-256' },
      extensions,
    },
    webcrypto,
  )
  const pem = generated.toString('pem')
  return {
    keys,
    pem,
    der: Buffer.from(generated.rawData).toString('base64'),
    certificate: new X509Certificate(pem),
  }
}

/** A name constraint subtree for nameConstraintsDer: a dNSName, URI host, DN or IPv4 range. */
export type TestSubtree = { dns: string } | { uri: string } | { dn: string } | { ip: [string, string] }

/** DER of NameConstraints (RFC 5280 §4.2.1.10), an `extensions` value for OID 2.5.29.30. */
export async function nameConstraintsDer(
  permitted: TestSubtree[],
  excluded: TestSubtree[] = [],
): Promise<Uint8Array> {
  const x509 = await loadX509()
  const length = (size: number) => (size < 128 ? [size] : [0x82, size >> 8, size & 0xff])
  const tlv = (tag: number, content: Uint8Array) => Uint8Array.of(tag, ...length(content.length), ...content)
  const text = (value: string) => new TextEncoder().encode(value)
  const base = (subtree: TestSubtree) => {
    if ('dns' in subtree) return tlv(0x82, text(subtree.dns))
    if ('uri' in subtree) return tlv(0x86, text(subtree.uri))
    if ('dn' in subtree) return tlv(0xa4, new Uint8Array(new x509.Name(subtree.dn).toArrayBuffer()))
    const octets = subtree.ip.flatMap((address) => address.split('.').map(Number))
    return tlv(0x87, Uint8Array.from(octets))
  }
  const subtrees = (tag: number, list: TestSubtree[]) =>
    list.length
      ? [...tlv(tag, Uint8Array.from(list.flatMap((subtree) => [...tlv(0x30, base(subtree))])))]
      : []
  return tlv(0x30, Uint8Array.from([...subtrees(0xa0, permitted), ...subtrees(0xa1, excluded)]))
}

/** A Signer (ES256) over a test certificate's key, sending `chain` as x5c / x5chain. */
export const certificateSigner = (leaf: TestCertificate, chain: TestCertificate[]): Signer => ({
  alg: 'ES256',
  kid: leaf.keys.kid,
  publicJwk: leaf.keys.publicJwk,
  x5c: chain.map(({ der }) => der),
  sign: async (data) =>
    signWithKeyObject(createPrivateKey({ key: leaf.keys.privateJwk as never, format: 'jwk' }), 'ES256', data),
})
