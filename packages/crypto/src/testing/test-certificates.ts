import { webcrypto, X509Certificate } from 'node:crypto'
import { loadX509 } from '../certificate-facts'
import { generateKeyPair, type KeyPairJwks, publicPart } from '../keys'

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

/** DER of NameConstraints (RFC 5280 §4.2.1.10) with dNSName subtrees, for `extensions`. */
export function dnsNameConstraints(permitted: string[], excluded: string[] = []): Uint8Array {
  const tlv = (tag: number, content: Uint8Array) => {
    if (content.length > 127) throw new Error('test name constraints are short')
    return Uint8Array.of(tag, content.length, ...content)
  }
  const subtrees = (names: string[]) =>
    names.flatMap((name) => [...tlv(0x30, tlv(0x82, new TextEncoder().encode(name)))])
  const parts = [
    ...(permitted.length ? [...tlv(0xa0, Uint8Array.from(subtrees(permitted)))] : []),
    ...(excluded.length ? [...tlv(0xa1, Uint8Array.from(subtrees(excluded)))] : []),
  ]
  return tlv(0x30, Uint8Array.from(parts))
}
