import { createHash, createPublicKey, verify, X509Certificate } from 'node:crypto'
import type { CoseKey as CoseKeyClass, MdocContext } from '@owf/mdoc'
import type { JWK } from 'jose'
import { parseCertificate } from '../parsed-certificates'
import { MDOC_ISSUER_PROFILE, validatePath } from '../path-validation'
import { jwkCurveOf, jwkToCoseKey } from './issue'

/**
 * The crypto callbacks @owf/mdoc delegates to, from node:crypto: the library parses the mdoc and
 * checks structure, value digests, validity, device authentication and the chain; these only do
 * primitives (digests, COSE_Sign1 verification, X.509 parsing and chain checks).
 */
export type VerificationContext = Pick<MdocContext, 'crypto' | 'cose' | 'x509'>

/** @owf/mdoc is loaded on the first mdoc presentation: it is large and many verifiers never see one. */
let loaded: Promise<{ mdoc: typeof import('@owf/mdoc'); context: VerificationContext }> | undefined
export const loadMdoc = () =>
  (loaded ??= import('@owf/mdoc').then((mdoc) => ({ mdoc, context: createMdocContext(mdoc.CoseKey) })))

export function createMdocContext(CoseKey: typeof CoseKeyClass): VerificationContext {
  return {
    crypto: {
      random: (length) =>
        new Uint8Array(createHash('sha256').update(String(Math.random())).digest().subarray(0, length)),
      digest: ({ digestAlgorithm, bytes }) =>
        new Uint8Array(createHash(digestAlgorithm.replace('-', '').toLowerCase()).update(bytes).digest()),
      calculateEphemeralMacKey: () => {
        throw new Error('not used by issuer-signed verification')
      },
    },
    cose: {
      sign1: {
        sign: () => {
          throw new Error('not used by verification')
        },
        verify: ({ key, sign1 }) => {
          // The curve from its COSE id: @owf/mdoc 0.6.0's `key.jwk` names P-384 'p-384', which node refuses.
          const jwk = { ...key.jwk, crv: jwkCurveOf(key.curve) }
          const publicKey = createPublicKey({ key: jwk as never, format: 'jwk' })
          const hash = jwk.crv === 'P-384' ? 'sha384' : jwk.crv === 'Ed25519' ? null : 'sha256'
          return verify(
            hash,
            sign1.toBeSigned,
            { key: publicKey, dsaEncoding: 'ieee-p1363' },
            sign1.signature,
          )
        },
      },
      mac0: {
        sign: () => {
          throw new Error('not used')
        },
        verify: () => {
          throw new Error('not used')
        },
      },
    },
    x509: {
      getIssuerNameField: ({ certificate, field }) =>
        new X509Certificate(certificate).issuer
          .split('\n')
          .filter((line) => line.startsWith(`${field}=`))
          .map((line) => line.slice(field.length + 1)),
      // Our own COSE_Key map: @owf/mdoc 0.6.0's `CoseKey.fromJwk` refuses P-384 (it maps 'p-384').
      getPublicKey: ({ certificate }) =>
        CoseKey.fromEncodedStructure(
          jwkToCoseKey(new X509Certificate(certificate).publicKey.export({ format: 'jwk' }) as JWK),
        ),
      // The shared path validation, with the Document Signer profile (ISO 18013-5 B.1.4, S-132).
      verifyCertificateChain: async ({ trustedCertificates, x5chain, now }) => {
        const parse = (der: Uint8Array) => parseCertificate(Buffer.from(der).toString('base64'))
        const validation = await validatePath({
          chain: x5chain.map(parse),
          anchors: trustedCertificates.map(parse),
          now: now ?? new Date(),
          profile: MDOC_ISSUER_PROFILE,
          name: 'x5chain',
        })
        if (!validation.valid) throw new Error(validation.reason)
      },
      getCertificateData: ({ certificate }) => {
        const parsed = new X509Certificate(certificate)
        return {
          issuerName: parsed.issuer,
          subjectName: parsed.subject,
          serialNumber: parsed.serialNumber,
          thumbprint: parsed.fingerprint256.replaceAll(':', '').toLowerCase(),
          notBefore: new Date(parsed.validFrom),
          notAfter: new Date(parsed.validTo),
          pem: parsed.toString(),
        }
      },
    },
  }
}
