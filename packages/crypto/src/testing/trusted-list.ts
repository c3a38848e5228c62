import { createPrivateKey, webcrypto } from 'node:crypto'
import { loadX509 } from '../certificate-facts'
import { loadXmlCrypto } from '../xml-modules'

/** A scheme operator's signing key and certificate (RSA: xml-crypto signs RSA). */
export interface TestListSigner {
  privateKeyPem: string
  certificatePem: string
}

export interface TestListService {
  type: string
  /** Default: granted. */
  status?: string
  certificates: string[]
}

export async function createTestListSigner(subject = 'CN=Test Scheme Operator'): Promise<TestListSigner> {
  const x509 = await loadX509()
  const algorithm = {
    name: 'RSASSA-PKCS1-v1_5',
    hash: 'SHA-256',
    modulusLength: 2048,
    publicExponent: new Uint8Array([1, 0, 1]),
  }
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

/** Signs a list as a scheme operator does: an enveloped signature over the whole list (xml-crypto). */
export async function signTrustedList(xml: string, signer: TestListSigner): Promise<string> {
  const { SignedXml } = await loadXmlCrypto()
  const signed = new SignedXml({
    privateKey: signer.privateKeyPem,
    publicCert: signer.certificatePem,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  })
  signed.addReference({
    xpath: "/*[local-name(.)='TrustServiceStatusList']",
    uri: '',
    isEmptyUri: true,
    transforms: [
      'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
      'http://www.w3.org/2001/10/xml-exc-c14n#',
    ],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
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

/** Signs a list of trusted entities as a compact JWS with the operator's key (RS256). */
export async function signListOfTrustedEntities(payload: object, signer: TestListSigner): Promise<string> {
  const { CompactSign } = await import('jose')
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', x5c: [base64Of(signer.certificatePem)] })
    .sign(createPrivateKey(signer.privateKeyPem))
}
