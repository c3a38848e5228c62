import { createHash, createPrivateKey, webcrypto, X509Certificate } from 'node:crypto'
import { loadX509 } from '../certificate-facts'
import { ECDSA_SHA256, ECDSA_SHA384, registerEcdsa, SHA384_DIGEST } from '../xml-ecdsa'
import { loadXmlCrypto } from '../xml-modules'

/** The key types a test scheme operator signs with (TS 119 612 §5.7: RSA or ECDSA). */
export type TestListKeyType = 'RSA' | 'P-256' | 'P-384'

/** A scheme operator's signing key and certificate. */
export interface TestListSigner {
  privateKeyPem: string
  certificatePem: string
  /** Absent: RSA. */
  keyType?: TestListKeyType
}

const KEY_ALGORITHMS = {
  RSA: {
    name: 'RSASSA-PKCS1-v1_5',
    hash: 'SHA-256',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
  },
  'P-256': { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' },
  'P-384': { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' },
}

/** The XMLDSig signature method, digest and JWS alg of each key type. */
const SIGNING = {
  RSA: {
    signature: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    digest: 'http://www.w3.org/2001/04/xmlenc#sha256',
    jws: 'RS256',
  },
  'P-256': { signature: ECDSA_SHA256, digest: 'http://www.w3.org/2001/04/xmlenc#sha256', jws: 'ES256' },
  'P-384': { signature: ECDSA_SHA384, digest: SHA384_DIGEST, jws: 'ES384' },
}

export interface TestListService {
  type: string
  /** Default: granted. */
  status?: string
  certificates: string[]
}

export async function createTestListSigner(
  subject = 'CN=Test Scheme Operator',
  keyType: TestListKeyType = 'RSA',
): Promise<TestListSigner> {
  const x509 = await loadX509()
  const algorithm = KEY_ALGORITHMS[keyType]
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: subject,
      notBefore: new Date(Date.now() - 86_400_000),
      notAfter: new Date(Date.now() + 30 * 86_400_000),
      keys,
      signingAlgorithm: algorithm,
    },
    webcrypto,
  )
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))
  return {
    privateKeyPem: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
      .export({ format: 'pem', type: 'pkcs8' })
      .toString(),
    certificatePem: certificate.toString('pem'),
    keyType,
  }
}

const base64Of = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')

/** A TS 119 612 §5.3.13 OtherTSLPointer of a test list of lists. */
export interface TestListPointer {
  location: string
  territory: string
  /** Who may sign the pointed list (PEM). */
  certificates: string[]
  /** Default: application/vnd.etsi.tsl+xml. */
  mimeType?: string
  /** Default: EUgeneric. */
  tslType?: string
}

const TSL_TYPE = 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/'

const pointerXml = (pointer: TestListPointer) => `<tsl:OtherTSLPointer>
<tsl:ServiceDigitalIdentities>${pointer.certificates
  .map(
    (pem) =>
      `<tsl:ServiceDigitalIdentity><tsl:DigitalId><tsl:X509Certificate>${base64Of(pem)}</tsl:X509Certificate></tsl:DigitalId></tsl:ServiceDigitalIdentity>`,
  )
  .join('')}</tsl:ServiceDigitalIdentities>
<tsl:TSLLocation>${pointer.location}</tsl:TSLLocation>
<tsl:AdditionalInformation>
<tsl:OtherInformation><tsl:TSLType>${pointer.tslType ?? `${TSL_TYPE}EUgeneric`}</tsl:TSLType></tsl:OtherInformation>
<tsl:OtherInformation><tsl:SchemeTerritory>${pointer.territory}</tsl:SchemeTerritory></tsl:OtherInformation>
<tsl:OtherInformation><ns3:MimeType xmlns:ns3="http://uri.etsi.org/02231/v2/additionaltypes#">${pointer.mimeType ?? 'application/vnd.etsi.tsl+xml'}</ns3:MimeType></tsl:OtherInformation>
</tsl:AdditionalInformation>
</tsl:OtherTSLPointer>`

/**
 * A minimal TS 119 612 TrustServiceStatusList (SchemeInformation with ListIssueDateTime,
 * NextUpdate and SchemeTerritory, one TSP with the given services), unsigned. With `pointers` it
 * is a list of the lists (LOTL, §5.3.13 PointersToOtherTSL), which has no services.
 */
export function buildTrustedList(options: {
  issued: Date
  nextUpdate: Date
  services?: TestListService[]
  /** Default: EU. */
  territory?: string
  pointers?: TestListPointer[]
}): string {
  const services = (options.services ?? [])
    .map(
      (service) => `<tsl:TSPService><tsl:ServiceInformation>
<tsl:ServiceTypeIdentifier>${service.type}</tsl:ServiceTypeIdentifier>
<tsl:ServiceName><tsl:Name xml:lang="en">Test service</tsl:Name></tsl:ServiceName>
<tsl:ServiceDigitalIdentity>${service.certificates
        .map(
          (pem) =>
            `<tsl:DigitalId><tsl:X509Certificate>${base64Of(pem)}</tsl:X509Certificate></tsl:DigitalId>`,
        )
        .join('')}</tsl:ServiceDigitalIdentity>
<tsl:ServiceStatus>${service.status ?? 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted'}</tsl:ServiceStatus>
<tsl:StatusStartingTime>${options.issued.toISOString()}</tsl:StatusStartingTime>
</tsl:ServiceInformation></tsl:TSPService>`,
    )
    .join('')
  const lotl = options.pointers !== undefined
  return `<?xml version="1.0" encoding="UTF-8"?>
<tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" Id="tsl" TSLTag="http://uri.etsi.org/19612/TSLTag">
<tsl:SchemeInformation>
<tsl:TSLVersionIdentifier>6</tsl:TSLVersionIdentifier>
<tsl:TSLSequenceNumber>1</tsl:TSLSequenceNumber>
<tsl:TSLType>${TSL_TYPE}${lotl ? 'EUlistofthelists' : 'EUgeneric'}</tsl:TSLType>
<tsl:SchemeOperatorName><tsl:Name xml:lang="en">Test Scheme Operator</tsl:Name></tsl:SchemeOperatorName>
<tsl:SchemeTerritory>${options.territory ?? 'EU'}</tsl:SchemeTerritory>
${lotl ? `<tsl:PointersToOtherTSL>${options.pointers?.map(pointerXml).join('')}</tsl:PointersToOtherTSL>\n` : ''}<tsl:ListIssueDateTime>${options.issued.toISOString()}</tsl:ListIssueDateTime>
<tsl:NextUpdate><tsl:dateTime>${options.nextUpdate.toISOString()}</tsl:dateTime></tsl:NextUpdate>
</tsl:SchemeInformation>
${
  lotl
    ? ''
    : `<tsl:TrustServiceProviderList><tsl:TrustServiceProvider>
<tsl:TSPInformation><tsl:TSPName><tsl:Name xml:lang="en">Test TSP</tsl:Name></tsl:TSPName></tsl:TSPInformation>
<tsl:TSPServices>${services}</tsl:TSPServices>
</tsl:TrustServiceProvider></tsl:TrustServiceProviderList>
`
}</tsl:TrustServiceStatusList>`
}

/** The XAdES signed properties a test signature carries (TS 119 612 §5.7, EN 319 132-1). */
export interface TestXades {
  /** Default: now. */
  signingTime?: Date
  /** The certificate SigningCertificateV2 names; default: the signer's. */
  certificatePem?: string
  /** CertDigest method; default: sha256. */
  digest?: 'sha1' | 'sha256' | 'sha384' | 'sha512'
}

const CERT_DIGEST_METHODS = {
  sha1: 'http://www.w3.org/2000/09/xmldsig#sha1',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha384: SHA384_DIGEST,
  sha512: 'http://www.w3.org/2001/04/xmlenc#sha512',
}

const qualifyingProperties = (signer: TestListSigner, xades: TestXades) => {
  const digest = xades.digest ?? 'sha256'
  const der = new X509Certificate(xades.certificatePem ?? signer.certificatePem).raw
  return `<xades:QualifyingProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Target="#list-signature">
<xades:SignedProperties Id="xades-signed-properties"><xades:SignedSignatureProperties>
<xades:SigningTime>${(xades.signingTime ?? new Date()).toISOString()}</xades:SigningTime>
<xades:SigningCertificateV2><xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm="${CERT_DIGEST_METHODS[digest]}"/><ds:DigestValue>${createHash(digest).update(der).digest('base64')}</ds:DigestValue></xades:CertDigest></xades:Cert></xades:SigningCertificateV2>
</xades:SignedSignatureProperties></xades:SignedProperties>
</xades:QualifyingProperties>`
}

/**
 * Signs a list as a scheme operator does: an enveloped signature over the whole list (xml-crypto,
 * rsa-sha256 or, for an EC signer, ecdsa-sha256 / ecdsa-sha384 of XMLDSig 1.1 §6.4.3) with XAdES
 * signed properties in a ds:Object, referenced from SignedInfo by Id with the SignedProperties
 * Type (`xades: false`: a bare XMLDSig signature).
 */
export async function signTrustedList(
  xml: string,
  signer: TestListSigner,
  options: { xades?: TestXades | false } = {},
): Promise<string> {
  const { SignedXml } = await loadXmlCrypto()
  const { signature, digest } = SIGNING[signer.keyType ?? 'RSA']
  const xades = options.xades === false ? undefined : (options.xades ?? {})
  const signed = registerEcdsa(
    new SignedXml({
      privateKey: signer.privateKeyPem,
      publicCert: signer.certificatePem,
      signatureAlgorithm: signature,
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
      ...(xades ? { objects: [{ content: qualifyingProperties(signer, xades) }] } : {}),
    }),
  )
  signed.addReference({
    xpath: "/*[local-name(.)='TrustServiceStatusList']",
    uri: '',
    isEmptyUri: true,
    transforms: [
      'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
      'http://www.w3.org/2001/10/xml-exc-c14n#',
    ],
    digestAlgorithm: digest,
  })
  if (xades)
    signed.addReference({
      xpath: "//*[local-name(.)='SignedProperties']",
      uri: '',
      isEmptyUri: false,
      transforms: ['http://www.w3.org/2001/10/xml-exc-c14n#'],
      digestAlgorithm: digest,
      type: 'http://uri.etsi.org/01903#SignedProperties',
    })
  signed.computeSignature(xml, {
    location: { reference: "/*[local-name(.)='TrustServiceStatusList']", action: 'append' },
    attrs: { Id: 'list-signature' },
  })
  return signed.getSignedXml()
}

/** A minimal TS 119 602 List of Trusted Entities (JSON form): one entity with the given services. */
export function buildListOfTrustedEntities(options: {
  issued: Date
  nextUpdate: Date
  services: TestListService[]
}) {
  return {
    LoTE: {
      ListAndSchemeInformation: {
        LoTEVersionIdentifier: 1,
        LoTESequenceNumber: 1,
        LoTEType: 'http://uri.etsi.org/19602/LoTEType/EUPIDProvidersList',
        SchemeOperatorName: [{ lang: 'en', value: 'Test Scheme Operator' }],
        SchemeTerritory: 'EU',
        ListIssueDateTime: options.issued.toISOString(),
        NextUpdate: options.nextUpdate.toISOString(),
      },
      TrustedEntitiesList: [
        {
          TrustedEntityInformation: { TEName: [{ lang: 'en', value: 'Test PID Provider' }] },
          TrustedEntityServices: options.services.map((service) => ({
            ServiceInformation: {
              ServiceName: [{ lang: 'en', value: 'Test service' }],
              ServiceTypeIdentifier: service.type,
              ...(service.status ? { ServiceStatus: service.status } : {}),
              ServiceDigitalIdentity: {
                X509Certificates: service.certificates.map((pem) => ({ val: base64Of(pem) })),
              },
            },
          })),
        },
      ],
    },
  }
}

/** Signs a list of trusted entities as a compact JWS with the operator's key (RS256, ES256 or ES384). */
export async function signListOfTrustedEntities(payload: object, signer: TestListSigner): Promise<string> {
  const { CompactSign } = await import('jose')
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({
      alg: SIGNING[signer.keyType ?? 'RSA'].jws,
      typ: 'JWT',
      x5c: [base64Of(signer.certificatePem)],
    })
    .sign(createPrivateKey(signer.privateKeyPem))
}
