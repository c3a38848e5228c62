import { randomBytes, webcrypto, X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import type * as X509 from '@peculiar/x509'
import { calculateJwkThumbprint, type JWK } from 'jose'
import { loadX509, MDL_DOCUMENT_SIGNER_EKU } from './certificate-facts'
import { publicPart } from './keys'
import { ISSUER_PROFILE, validatePath } from './path-validation'
import { algorithmForJwk, type SigningAlgorithm } from './signer'

function webAlgorithms(alg: SigningAlgorithm) {
  switch (alg) {
    case 'ES256':
      return { key: { name: 'ECDSA', namedCurve: 'P-256' }, signing: { name: 'ECDSA', hash: 'SHA-256' } }
    case 'ES384':
      return { key: { name: 'ECDSA', namedCurve: 'P-384' }, signing: { name: 'ECDSA', hash: 'SHA-384' } }
    case 'EdDSA':
      return { key: { name: 'Ed25519' }, signing: { name: 'Ed25519' } }
  }
}

async function importKeyPair(privateJwk: JWK) {
  const alg = algorithmForJwk(privateJwk)
  const { key, signing } = webAlgorithms(alg)
  const publicJwk = publicPart(privateJwk)
  const privateKey = await webcrypto.subtle.importKey('jwk', privateJwk as webcrypto.JsonWebKey, key, false, [
    'sign',
  ])
  const publicKey = await webcrypto.subtle.importKey('jwk', publicJwk as webcrypto.JsonWebKey, key, true, [
    'verify',
  ])
  return { privateKey, publicKey, signing }
}

export interface CertificateOptions {
  /** Public key the certificate is for. */
  subjectPublicJwk: JWK
  /** Distinguished name, e.g. `CN=ACME issuer`. */
  subject: string
  /** Private key that signs: the subject's own (self-signed) or the root's. */
  issuerPrivateJwk: JWK
  /** Issuer certificate (PEM) when not self-signed. */
  issuerCertificate?: string
  validityDays: number
  /** A CA certificate may sign others (root of an internal CA). */
  ca?: boolean
  /** basicConstraints pathLenConstraint of a CA certificate: 0 (the default) lets it issue leaves only. */
  pathLength?: number
  /**
   * SAN dNSName entries (OpenID4VP `x509_san_dns` takes the client id from here). An IP address
   * among them (a PUBLIC_URL of `http://127.0.0.1:3000` in development) becomes an iPAddress
   * entry: RFC 5280 §4.2.1.6 keeps addresses out of dNSName, and TLS clients check them there.
   */
  dnsNames?: string[]
  /**
   * SAN uniformResourceIdentifier entries, in the same SAN extension as `dnsNames` (SD-JWT VC §3.5:
   * the `iss` of a credential signed with `x5c` must match one).
   */
  uris?: string[]
  /**
   * An ISO 18013-5 Document Signer (Annex B.1.4): the critical extended key usage
   * id-mdl-kp-mdlDS (1.0.18013.5.1.2), so mdoc readers accept the leaf as a DS certificate.
   */
  documentSigner?: boolean
  /** Issuer alternative name, a URI (ISO 18013-5 B.1: the issuing authority's contact). */
  issuerAltNameUri?: string
  /** CRL distribution point URIs (ISO 18013-5 B.1); absent: none. */
  crlDistributionPoints?: string[]
  now?: Date
}

export { MDL_DOCUMENT_SIGNER_EKU }

/**
 * The SAN entries for a host name: a dNSName, and for an address (URL.hostname brackets IPv6 ones)
 * an iPAddress first. The dNSName of an address stays for development only: an `x509_san_dns`
 * client identifier on `http://127.0.0.1:3000` is matched against it (a strict wallet refuses an
 * address as a DNS name: use a host name or `x509_hash` beyond development).
 */
function hostNames(name: string): { type: 'ip' | 'dns'; value: string }[] {
  const address = name.replace(/^\[(.*)\]$/, '$1')
  const dns = { type: 'dns' as const, value: name }
  return isIP(address) ? [{ type: 'ip', value: address }, dns] : [dns]
}

/** Issues an X.509 certificate with WebCrypto through @peculiar/x509; returns PEM. */
export async function createCertificate(options: CertificateOptions): Promise<string> {
  const x509 = await loadX509()
  const issuer = await importKeyPair(options.issuerPrivateJwk)
  const { key } = webAlgorithms(algorithmForJwk(options.subjectPublicJwk))
  const subjectPublicKey = await webcrypto.subtle.importKey(
    'jwk',
    publicPart(options.subjectPublicJwk) as webcrypto.JsonWebKey,
    key,
    true,
    ['verify'],
  )
  const notBefore = new Date((options.now ?? new Date()).getTime() - 60_000)
  const notAfter = new Date(notBefore.getTime() + options.validityDays * 86_400_000)
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(
      options.ca ?? false,
      options.ca ? (options.pathLength ?? 0) : undefined,
      true,
    ),
    new x509.KeyUsagesExtension(
      options.ca
        ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign
        : x509.KeyUsageFlags.digitalSignature,
      true,
    ),
    await x509.SubjectKeyIdentifierExtension.create(subjectPublicKey, false, webcrypto),
    // RFC 5280 §4.2.1.1 and ISO 18013-5 B.1: the key identifier of the signing key, so a reader
    // finds the issuer certificate (the subject's own key when self-signed).
    await x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey, false, webcrypto),
  ]
  if (options.documentSigner)
    extensions.push(new x509.ExtendedKeyUsageExtension([MDL_DOCUMENT_SIGNER_EKU], true))
  if (options.issuerAltNameUri)
    extensions.push(
      new x509.IssuerAlternativeNameExtension([{ type: 'url', value: options.issuerAltNameUri }]),
    )
  if (options.crlDistributionPoints?.length)
    extensions.push(new x509.CRLDistributionPointsExtension(options.crlDistributionPoints))
  const altNames = [
    ...(options.dnsNames ?? []).flatMap(hostNames),
    ...(options.uris ?? []).map((value) => ({ type: 'url' as const, value })),
  ]
  if (altNames.length) extensions.push(new x509.SubjectAlternativeNameExtension(altNames))
  const serialNumber = randomBytes(16)
    .toString('hex')
    .replace(/^[89a-f]/, '1')
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber,
      subject: options.subject,
      issuer: options.issuerCertificate
        ? new x509.X509Certificate(options.issuerCertificate).subject
        : options.subject,
      notBefore,
      notAfter,
      publicKey: subjectPublicKey,
      signingKey: issuer.privateKey,
      signingAlgorithm: issuer.signing,
      extensions,
    },
    webcrypto,
  )
  return certificate.toString('pem')
}

/** id-ce-cRLNumber (RFC 5280 §5.2.3). */
const CRL_NUMBER_OID = '2.5.29.20'

/** DER of a non-negative INTEGER (X.690 §8.3): big-endian, a leading zero byte when the top bit is set. */
function derInteger(value: number): ArrayBuffer {
  let hex = value.toString(16)
  if (hex.length % 2) hex = `0${hex}`
  if (Number.parseInt(hex.slice(0, 2), 16) & 0x80) hex = `00${hex}`
  const content = Buffer.from(hex, 'hex')
  return Uint8Array.of(0x02, content.length, ...content).buffer
}

/**
 * A CRL (RFC 5280 §5) of a CA that has revoked nothing, signed with its key: what the CRL
 * distribution point of its leaves (ISO 18013-5 B.1) serves. It carries the Authority Key
 * Identifier and the CRL Number (§5.2.1, §5.2.3: both MUST), the number being the seconds since
 * the epoch of `thisUpdate`, so that it grows with every CRL signed later. Returns DER.
 */
export async function createEmptyCrl(options: {
  issuerPrivateJwk: JWK
  issuerCertificate: string
  thisUpdate: Date
  nextUpdate: Date
}): Promise<Uint8Array> {
  const x509 = await loadX509()
  const issuer = await importKeyPair(options.issuerPrivateJwk)
  const ca = new x509.X509Certificate(options.issuerCertificate)
  const crl = await x509.X509CrlGenerator.create(
    {
      issuer: ca.subject,
      thisUpdate: options.thisUpdate,
      nextUpdate: options.nextUpdate,
      signingKey: issuer.privateKey,
      signingAlgorithm: issuer.signing,
      extensions: [
        await x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey, false, webcrypto),
        new x509.Extension(
          CRL_NUMBER_OID,
          false,
          derInteger(Math.floor(options.thisUpdate.getTime() / 1000)),
        ),
      ],
    },
    webcrypto,
  )
  return new Uint8Array(crl.rawData)
}

export interface ParsedChain {
  /** Base64 DER, leaf first, for `x5c` / `x5chain`. */
  x5c: string[]
  pem: string[]
  leafKid: string
  notAfter: Date
}

/**
 * Reads a PEM chain (leaf first), checks that the leaf carries `publicJwk` and that the chain is
 * a valid certification path at `now` up to its last certificate (validatePath). Throws with a
 * message naming the offending position.
 */
export async function parseCertificateChain(
  pems: string[],
  publicJwk: JWK,
  now: Date = new Date(),
): Promise<ParsedChain> {
  const x509 = await loadX509()
  const certificates = pems.map((pem, index) => {
    try {
      return new x509.X509Certificate(pem)
    } catch (cause) {
      throw new Error(`certificate ${index} is not a valid PEM or DER X.509 certificate`, { cause })
    }
  })
  const [leaf] = certificates
  if (!leaf) throw new Error('the certificate chain is empty')
  const leafJwk = (await webcrypto.subtle.exportKey('jwk', await leaf.publicKey.export(webcrypto))) as JWK
  const leafKid = await calculateJwkThumbprint(publicPart(leafJwk))
  if (leafKid !== (await calculateJwkThumbprint(publicPart(publicJwk)))) {
    throw new Error('certificate 0 does not certify the key chain’s public key')
  }
  // The last certificate is the chain's own anchor: the path below it must be one that a
  // relying party validates (RFC 5280 §6.1), so an operator cannot import a chain that every
  // wallet and verifier would refuse (an intermediate that is not a CA, an expired link…).
  const chain = certificates.map((certificate) => new X509Certificate(Buffer.from(certificate.rawData)))
  const validation = await validatePath({
    chain,
    anchors: chain.slice(-1),
    now,
    profile: ISSUER_PROFILE,
    name: 'chain',
  })
  if (!validation.valid) throw new Error(validation.reason)
  return {
    x5c: certificates.map((certificate) => Buffer.from(certificate.rawData).toString('base64')),
    pem: certificates.map((certificate) => certificate.toString('pem')),
    leafKid,
    notAfter: leaf.notAfter,
  }
}
