import { createPrivateKey, webcrypto } from 'node:crypto'
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

/**
 * A minimal TS 119 612 TrustServiceStatusList (SchemeInformation with ListIssueDateTime and
 * NextUpdate, one TSP with the given services), unsigned.
 */
export function buildTrustedList(options: {
  issued: Date
  nextUpdate: Date
  services: TestListService[]
}): string {
  const services = options.services
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
  return `<?xml version="1.0" encoding="UTF-8"?>
<tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" Id="tsl" TSLTag="http://uri.etsi.org/19612/TSLTag">
<tsl:SchemeInformation>
<tsl:TSLVersionIdentifier>6</tsl:TSLVersionIdentifier>
<tsl:TSLSequenceNumber>1</tsl:TSLSequenceNumber>
<tsl:TSLType>http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric</tsl:TSLType>
<tsl:SchemeOperatorName><tsl:Name xml:lang="en">Test Scheme Operator</tsl:Name></tsl:SchemeOperatorName>
<tsl:SchemeTerritory>EU</tsl:SchemeTerritory>
<tsl:ListIssueDateTime>${options.issued.toISOString()}</tsl:ListIssueDateTime>
<tsl:NextUpdate><tsl:dateTime>${options.nextUpdate.toISOString()}</tsl:dateTime></tsl:NextUpdate>
</tsl:SchemeInformation>
<tsl:TrustServiceProviderList><tsl:TrustServiceProvider>
<tsl:TSPInformation><tsl:TSPName><tsl:Name xml:lang="en">Test TSP</tsl:Name></tsl:TSPName></tsl:TSPInformation>
<tsl:TSPServices>${services}</tsl:TSPServices>
</tsl:TrustServiceProvider></tsl:TrustServiceProviderList>
</tsl:TrustServiceStatusList>`
}

/**
 * Signs a list as a scheme operator does: an enveloped signature over the whole list (xml-crypto,
 * rsa-sha256 or, for an EC signer, ecdsa-sha256 / ecdsa-sha384 of XMLDSig 1.1 §6.4.3).
 */
export async function signTrustedList(xml: string, signer: TestListSigner): Promise<string> {
  const { SignedXml } = await loadXmlCrypto()
  const { signature, digest } = SIGNING[signer.keyType ?? 'RSA']
  const signed = registerEcdsa(
    new SignedXml({
      privateKey: signer.privateKeyPem,
      publicCert: signer.certificatePem,
      signatureAlgorithm: signature,
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
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
  signed.computeSignature(xml, {
    location: { reference: "/*[local-name(.)='TrustServiceStatusList']", action: 'append' },
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
