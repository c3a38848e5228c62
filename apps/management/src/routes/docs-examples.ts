import {
  zAccessCertificateRequest,
  zAttributeProviderInput,
  zAuthServerInput,
  zClientCreate,
  zClientSecretRotate,
  zClientUpdate,
  zCredentialConfigInput,
  zFederationMembershipInput,
  zHandleStatusChange,
  zKeyChainCreate,
  zKeyChainRotate,
  zKeyChainUpdate,
  zLoginProviderInput,
  zLogoUpload,
  zOfferCreate,
  zPresentationConfigInput,
  zPresentationRequestCreate,
  zRegistrarConfigInput,
  zRegistrationCertificateRequest,
  zRelyingPartyRegistration,
  zSchemaMetadataSign,
  zSchemaMetadataSignVersion,
  zSessionResultRequest,
  zSessionStatusChange,
  zTenantCreate,
  zTenantUpdate,
  zTokenRequest,
  zTrustListInput,
  zWalletProviderInput,
  zWebhookEndpointInput,
} from '@credential-service/core-domain'
import { z } from 'zod'

/**
 * Named request body examples (OpenAPI Example Objects) per body schema, shown by Swagger UI and
 * listed under the operation's `requestBody.content.*.examples`. `value` is typed as the schema's
 * input, and test/openapi-examples.test.ts parses every example with the route's own schema and
 * sends the issuance and presentation ones to the API. Loaded with the docs, on their first request.
 */
export const requestExamples =
  z.registry<Record<string, { summary: string; description?: string; value: z.$input }>>()

/**
 * One story across the examples: tenant `acme` issues an SD-JWT VC employee badge and an mdoc
 * mobile driving licence, signed by one key chain, and asks for them back. The ids below are the
 * cross-references, so that the examples can be sent in this order as they are.
 */
const TENANT = 'acme'
const KEY_CHAIN = 'acme-signing'
const BADGE = 'employee-badge'
const BADGE_VCT = 'https://credentials.example.com/types/employee-badge'
const LICENCE = 'mobile-driving-licence'
const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL'
const MDL_NAMESPACE = 'org.iso.18013.5.1'
const WEBHOOK = 'acme-events'
const ATTRIBUTE_PROVIDER = 'licence-registry'
const LOGIN_PROVIDER = 'acme-sso'
const BADGE_CHECK = 'employee-check'
const AGE_CHECK = 'age-over-18'
const STATUS_HANDLE = 'contract-2019-0412'
const BACKEND_CLIENT = 'acme-backend'

requestExamples.add(zTokenRequest, {
  clientSecretPost: {
    summary: 'Client credentials in the body',
    value: {
      grant_type: 'client_credentials',
      client_id: BACKEND_CLIENT,
      client_secret: 'acme-backend-secret-0123',
      scope: 'issuance:offer issuance:config',
    },
  },
  clientSecretBasic: {
    summary: 'Client credentials as `Authorization: Basic`',
    description: 'Every role of the client is granted when no `scope` is given.',
    value: { grant_type: 'client_credentials' },
  },
})

requestExamples.add(zTenantCreate, {
  tenant: {
    summary: 'A tenant',
    value: {
      id: TENANT,
      name: 'ACME Corporation',
      description: 'Issues employee badges and mobile driving licences',
      presentationRetention: 'drop-after-delivery',
      credentialEncryption: 'optional',
      country: 'DE',
    },
  },
})

requestExamples.add(zTenantUpdate, {
  requireEncryption: {
    summary: 'Require encrypted credential responses',
    value: { credentialEncryption: 'required' },
  },
  country: {
    summary: 'State the country: the default key chain made on first need names it (mso_mdoc needs one)',
    value: { country: 'DE' },
  },
  rename: {
    summary: 'Rename, drop the description',
    value: { name: 'ACME Group', description: null },
  },
  branding: {
    summary: 'Brand the issuer per locale (OpenID4VCI 1.0 §12.2.4 display)',
    value: {
      issuerDisplay: [
        {
          locale: 'en',
          name: 'ACME',
          logo: { uri: 'https://cdn.acme.example/logo.png', alt_text: 'ACME logo' },
          background_color: '#12107c',
          text_color: '#ffffff',
        },
        {
          locale: 'de',
          name: 'ACME GmbH',
          logo: { uri: 'https://cdn.acme.example/logo.png', alt_text: 'ACME-Logo' },
        },
      ],
    },
  },
})

requestExamples.add(zLogoUpload, {
  png: {
    summary: 'A PNG logo (here 1x1 pixel), base64',
    value: {
      contentType: 'image/png',
      data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
    },
  },
})

requestExamples.add(zClientCreate, {
  issuingBackend: {
    summary: 'A backend that sets up and issues credentials',
    value: {
      clientId: BACKEND_CLIENT,
      clientSecret: 'acme-backend-secret-0123',
      description: 'HR system: issues employee badges and driving licences',
      roles: ['key:manage', 'issuance:config', 'issuance:offer'],
      allowedIssuanceConfigs: [BADGE, LICENCE],
    },
  },
  verifierFrontend: {
    summary: 'A reception app that only asks for badges (generated id and secret)',
    value: {
      description: 'Reception desk: checks employee badges',
      roles: ['presentation:request'],
      allowedPresentationConfigs: [BADGE_CHECK],
    },
  },
})

requestExamples.add(zClientUpdate, {
  roles: {
    summary: 'Change roles and allowed configurations',
    value: {
      roles: ['issuance:offer', 'presentation:request'],
      allowedIssuanceConfigs: [BADGE],
      allowedPresentationConfigs: null,
    },
  },
})

requestExamples.add(zClientSecretRotate, {
  generated: { summary: 'A generated secret, returned once', value: {} },
  chosen: { summary: 'A secret of your choice', value: { clientSecret: 'acme-backend-secret-4567' } },
})

/** A P-256 key made for this example and published with it: never use it to sign anything. */
const PUBLISHED_EXAMPLE_KEY = {
  kty: 'EC',
  crv: 'P-256',
  x: 'KuqgbrrfKd83rtK5oemBajzQrEGmuoTA6T_BouLr6wQ',
  y: 'Ge3-gto12eF7gbRJXiyN8kLG_evIYQX_lMDwN35oAVo',
  d: 'i_s1cW-B2q95At8xKRVw9IURyCN8EyQwBwEj9TDk1s8',
}

requestExamples.add(zKeyChainCreate, {
  generate: {
    summary: 'Generate a key, certified by an internal CA of its own (HAIP, mdoc-ready)',
    description:
      '`country` puts `C=` into the subjects, which mso_mdoc configurations need (ISO 18013-5 Annex B.1).',
    value: {
      source: 'generate',
      id: KEY_CHAIN,
      description: 'Signs employee badges, driving licences and presentation requests',
      algorithm: 'ES256',
      certificate: {
        mode: 'internal-ca',
        subject: 'CN=ACME Credential Issuer,O=ACME Corporation',
        country: 'DE',
        validityDays: 365,
      },
      rotationPolicy: { enabled: true, intervalDays: 90, gracePeriodDays: 30 },
    },
  },
  import: {
    summary: 'Import an existing private key (a JWK or PEM), stored encrypted',
    description:
      'The key shown is published with this description: never use it. Without `certificateChain` (PEM, leaf first) the key gets a self-signed certificate.',
    value: {
      source: 'import',
      id: 'acme-imported',
      description: 'Key migrated from the previous issuer',
      privateKey: PUBLISHED_EXAMPLE_KEY,
    },
  },
  importAzure: {
    summary: 'Import an existing private key into Azure Key Vault (Import Key); the vault signs with it',
    description:
      'The key shown is published with this description: never use it. The service keeps only the public key and the vault key’s `name/version` (`externalKeyId` in the answer).',
    value: {
      source: 'import',
      id: 'acme-imported-azure',
      kmsProvider: 'azure-key-vault',
      privateKey: PUBLISHED_EXAMPLE_KEY,
    },
  },
  importGcp: {
    summary: 'Import an existing private key into Google Cloud KMS (an import job); Cloud KMS signs with it',
    description:
      'The key shown is published with this description: never use it. It becomes version 1 of a new HSM key in GCP_KMS_KEY_RING; the service keeps only the public key and that version (`externalKeyId` in the answer).',
    value: {
      source: 'import',
      id: 'acme-imported-gcp',
      kmsProvider: 'gcp-kms',
      privateKey: PUBLISHED_EXAMPLE_KEY,
    },
  },
  generatePkcs11: {
    summary: 'Generate a key on the PKCS#11 token (HSM), certified by the key chain’s internal CA',
    value: {
      source: 'generate',
      id: 'acme-hsm',
      kmsProvider: 'pkcs11',
      algorithm: 'ES256',
      certificate: { subject: 'CN=ACME PID Issuer,O=ACME', country: 'DE' },
    },
  },
  externalPkcs11: {
    summary: 'Register a key on the PKCS#11 token by its label (CKA_LABEL)',
    value: {
      source: 'external',
      id: 'acme-hsm-dsc',
      kmsProvider: 'pkcs11',
      externalKeyId: 'acme-document-signer-2026',
    },
  },
  externalAzure: {
    summary: 'Register an Azure Key Vault key (its current version is pinned)',
    value: {
      source: 'external',
      id: 'acme-azure',
      kmsProvider: 'azure-key-vault',
      externalKeyId: 'acme-issuer-signing',
    },
  },
  externalGcp: {
    summary: 'Register a Google Cloud KMS key version',
    value: {
      source: 'external',
      id: 'acme-gcp',
      kmsProvider: 'gcp-kms',
      externalKeyId:
        'projects/acme/locations/europe-west3/keyRings/issuer/cryptoKeys/pid/cryptoKeyVersions/1',
    },
  },
  externalVault: {
    summary: 'Register a HashiCorp Vault transit key',
    value: {
      source: 'external',
      id: 'acme-vault',
      kmsProvider: 'vault',
      externalKeyId: 'acme-issuer-signing',
    },
  },
  externalAwsKms: {
    summary: 'Register an AWS KMS key',
    value: {
      source: 'external',
      id: 'acme-kms',
      kmsProvider: 'aws-kms',
      externalKeyId: 'arn:aws:kms:eu-central-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      rotationPolicy: { enabled: false },
    },
  },
})

requestExamples.add(zKeyChainUpdate, {
  rotationPolicy: {
    summary: 'Rotate every 180 days',
    value: {
      description: 'Signs employee badges and driving licences',
      rotationPolicy: { enabled: true, intervalDays: 180, gracePeriodDays: 30 },
    },
  },
})

requestExamples.add(zKeyChainRotate, {
  database: { summary: 'A key chain of the database (`db`): a new key is generated', value: {} },
  external: {
    summary:
      'A registered external key chain: the new key, created in Vault, AWS KMS or on the token beforehand (a chain generated on a PKCS#11 token gets a new token key with `{}`)',
    value: { externalKeyId: 'acme-issuer-signing-2026' },
  },
})

requestExamples.add(zWebhookEndpointInput, {
  hmac: {
    summary: 'HMAC-signed deliveries of both event types',
    value: {
      id: WEBHOOK,
      description: 'Issuance notifications and presentation results for the HR system',
      url: 'https://hooks.acme.example/credential-service',
      auth: { type: 'hmac' },
      events: ['issuance.notification', 'presentation.result'],
    },
  },
})

requestExamples.add(zAttributeProviderInput, {
  hmac: {
    summary: 'A registry that supplies claims at issuance, HMAC-signed requests',
    value: {
      id: ATTRIBUTE_PROVIDER,
      description: 'Licence registry: document number, dates and driving privileges',
      url: 'https://registry.acme.example/credential-claims',
      auth: { type: 'hmac' },
      timeoutMs: 3000,
    },
  },
  apiKey: {
    summary: 'The same with an API key header',
    value: {
      id: ATTRIBUTE_PROVIDER,
      url: 'https://registry.acme.example/credential-claims',
      auth: { type: 'api-key', headerName: 'x-api-key', value: 'registry-api-key-0123456789' },
    },
  },
})

requestExamples.add(zAuthServerInput, {
  jwt: {
    summary: 'A Keycloak realm issuing RFC 9068 JWT access tokens',
    value: {
      id: 'keycloak',
      description: 'ACME Keycloak realm for wallets',
      issuer: 'https://login.acme.example/realms/wallets',
      credentialConfigurationIds: ['employee'],
      mapping: ['authorization_details', 'scope'],
      claimsSource: 'token',
    },
  },
  introspection: {
    summary: 'Opaque tokens checked by RFC 7662 introspection, claims from the attribute provider',
    value: {
      id: 'bank-as',
      issuer: 'https://auth.bank.example',
      tokenCheck: 'introspection',
      clientId: 'credential-issuer',
      clientSecret: 'bank-introspection-secret-0123',
      credentialConfigurationIds: ['employee'],
      claimsSource: 'attribute-provider',
      singleUseTokens: true,
    },
  },
})

requestExamples.add(zLoginProviderInput, {
  confidentialClient: {
    summary: 'A Keycloak realm that logs holders in',
    value: {
      id: LOGIN_PROVIDER,
      description: 'ACME single sign-on',
      issuer: 'https://login.acme.example/realms/staff',
      clientId: 'credential-issuer',
      clientSecret: 'acme-sso-client-secret-0123',
      scopes: ['openid', 'profile'],
    },
  },
  presentation: {
    summary: 'The holder presents a credential before issuance (presentation during issuance)',
    description:
      'The presentation configuration (here the employee badge check) asks for the claims that credential configurations naming this provider map into their fields (`userAuthentication.claims`, e.g. `{"family_name": ["family_name"]}`). A PID check is the common case: show your PID, get an mDL.',
    value: {
      id: 'badge-login',
      kind: 'presentation',
      description: 'Log in by presenting the employee badge',
      presentationConfigId: BADGE_CHECK,
    },
  },
})

/** A self-signed P-256 CA certificate made for this example (CN=Example Wallet Provider Root CA). */
const EXAMPLE_WALLET_PROVIDER_ROOT = [
  '-----BEGIN CERTIFICATE-----',
  'MIICFzCCAb2gAwIBAgIUSD9+ulhSOwUcF3NRnINQ51LLAoAwCgYIKoZIzj0EAwIw',
  'WTEoMCYGA1UEAwwfRXhhbXBsZSBXYWxsZXQgUHJvdmlkZXIgUm9vdCBDQTEgMB4G',
  'A1UECgwXRXhhbXBsZSBXYWxsZXQgUHJvdmlkZXIxCzAJBgNVBAYTAkRFMB4XDTI2',
  'MTEyNjIzNTcyOVoXDTM2MTEyMzIzNTcyOVowWTEoMCYGA1UEAwwfRXhhbXBsZSBX',
  'YWxsZXQgUHJvdmlkZXIgUm9vdCBDQTEgMB4GA1UECgwXRXhhbXBsZSBXYWxsZXQg',
  'UHJvdmlkZXIxCzAJBgNVBAYTAkRFMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE',
  'ScsC7ek5VXPScEF7wCDLIpalWkNrebSQ4IluB3wtT/xb2EfqU1/RYVpPkfAMHP7s',
  'D08Kg3iiSngmjab2z8wseaNjMGEwHQYDVR0OBBYEFFdhqjVN8/N7DjjRJ2foY7j8',
  '1H4XMB8GA1UdIwQYMBaAFFdhqjVN8/N7DjjRJ2foY7j81H4XMA8GA1UdEwEB/wQF',
  'MAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMCA0gAMEUCIQDTgFHYszBX',
  'e7HAz0CQykPU2cdkd1sUjgNs1wb1cezElAIgUVVh8FukD/0bkWQJMHqs1x7DRWME',
  'AR871bkZDBORYYw=',
  '-----END CERTIFICATE-----',
].join('\n')

requestExamples.add(zWalletProviderInput, {
  walletProvider: {
    summary: 'Trust the attestations of one wallet provider',
    value: {
      id: 'example-wallet',
      name: 'Example Wallet',
      description: 'Wallet and key attestations of the Example Wallet app',
      trustListIds: ['example-wallet-roots'],
    },
  },
})

requestExamples.add(zTrustListInput, {
  walletRoots: {
    summary: 'The root certificates of a wallet provider, for wallet and key attestations',
    value: {
      id: 'example-wallet-roots',
      source: { type: 'pem', certificates: [EXAMPLE_WALLET_PROVIDER_ROOT] },
    },
  },
  pem: {
    summary: 'Trust the issuers that chain to certificates given here',
    value: {
      id: 'partner-issuers',
      description: 'Issuing CAs of our partners',
      source: { type: 'pem', certificates: [EXAMPLE_WALLET_PROVIDER_ROOT] },
    },
  },
  etsiTrustedList: {
    summary: 'Trust the PID providers of an ETSI TS 119 612 trusted list',
    description:
      'Fetched hourly under the outbound policy; its XML signature must verify with a signer certificate. Past NextUpdate plus one day without a good fetch it contributes nothing.',
    value: {
      id: 'eu-pid-providers',
      source: {
        type: 'etsi-tl',
        url: 'https://trusted-lists.example.eu/pid-providers.xml',
        signerCertificates: [EXAMPLE_WALLET_PROVIDER_ROOT],
        serviceTypes: ['http://uri.etsi.org/Svc/Svctype/Provider/PID'],
        refreshSeconds: 3600,
      },
      graceSeconds: 86_400,
    },
  },
  etsiListOfTrustedLists: {
    summary: 'Trust qualified CAs of two member states through the EU list of trusted lists',
    description:
      'The LOTL is checked with its signer certificates, then each national list it points to with the certificates of its pointer; any list failing fails the refresh.',
    value: {
      id: 'eu-qualified-cas',
      source: {
        type: 'etsi-lotl',
        url: 'https://trusted-lists.example.eu/lotl.xml',
        signerCertificates: [EXAMPLE_WALLET_PROVIDER_ROOT],
        territories: ['DE', 'AT'],
        serviceTypes: ['http://uri.etsi.org/TrstSvc/Svctype/CA/QC'],
      },
    },
  },
})

const label = (en: string, de: string) => [
  { name: en, locale: 'en-US' },
  { name: de, locale: 'de-DE' },
]

requestExamples.add(zCredentialConfigInput, {
  sdJwtVc: {
    summary: 'SD-JWT VC (dc+sd-jwt): an employee badge, claims given with the offer',
    value: {
      id: BADGE,
      description: 'Who works at ACME, in which department, since when',
      config: {
        format: 'dc+sd-jwt',
        vct: BADGE_VCT,
        display: label('ACME employee badge', 'ACME Mitarbeiterausweis'),
      },
      fields: [
        {
          path: ['given_name'],
          type: 'string',
          mandatory: true,
          disclosable: true,
          display: label('Given name', 'Vorname'),
        },
        {
          path: ['family_name'],
          type: 'string',
          mandatory: true,
          disclosable: true,
          display: label('Family name', 'Nachname'),
        },
        { path: ['employee_id'], type: 'string', mandatory: true, disclosable: true },
        {
          path: ['department'],
          type: 'string',
          disclosable: true,
          display: label('Department', 'Abteilung'),
        },
        { path: ['employed_since'], type: 'date', disclosable: true },
        { path: ['address', 'locality'], type: 'string', disclosable: true },
        { path: ['employer'], type: 'string', mandatory: true, defaultValue: 'ACME Corporation' },
      ],
      keyChainId: KEY_CHAIN,
      webhookEndpointId: WEBHOOK,
      lifetimeSeconds: 365 * 86_400,
      keyBinding: true,
      statusManagement: true,
      dpop: 'optional',
    },
  },
  mdoc: {
    summary: 'ISO mdoc (mso_mdoc): a mobile driving licence, the holder logs in first',
    description:
      'The holder logs in at the login provider (authorization code flow), whose claims fill the names and the birth date; the attribute provider adds the rest. Offers for it use grant `authorization_code`.',
    value: {
      id: LICENCE,
      description: 'ISO/IEC 18013-5 mobile driving licence',
      config: {
        format: 'mso_mdoc',
        docType: MDL_DOCTYPE,
        display: label('Mobile driving licence', 'Mobiler Führerschein'),
      },
      fields: [
        { path: ['family_name'], type: 'string', mandatory: true, namespace: MDL_NAMESPACE },
        { path: ['given_name'], type: 'string', mandatory: true, namespace: MDL_NAMESPACE },
        { path: ['birth_date'], type: 'date', mandatory: true, namespace: MDL_NAMESPACE },
        { path: ['issue_date'], type: 'date', mandatory: true, namespace: MDL_NAMESPACE },
        { path: ['expiry_date'], type: 'date', mandatory: true, namespace: MDL_NAMESPACE },
        {
          path: ['issuing_country'],
          type: 'string',
          mandatory: true,
          namespace: MDL_NAMESPACE,
          defaultValue: 'DE',
        },
        {
          path: ['issuing_authority'],
          type: 'string',
          mandatory: true,
          namespace: MDL_NAMESPACE,
          defaultValue: 'ACME Licensing Authority',
        },
        { path: ['document_number'], type: 'string', mandatory: true, namespace: MDL_NAMESPACE },
        { path: ['driving_privileges'], type: 'array', mandatory: true, namespace: MDL_NAMESPACE },
        { path: ['age_over_18'], type: 'boolean', disclosable: true, namespace: MDL_NAMESPACE },
      ],
      keyChainId: KEY_CHAIN,
      attributeProviderId: ATTRIBUTE_PROVIDER,
      webhookEndpointId: WEBHOOK,
      userAuthentication: {
        loginProviderId: LOGIN_PROVIDER,
        claims: {
          [`${MDL_NAMESPACE}.family_name`]: 'family_name',
          [`${MDL_NAMESPACE}.given_name`]: 'given_name',
          [`${MDL_NAMESPACE}.birth_date`]: 'birthdate',
        },
      },
      lifetimeSeconds: 90 * 86_400,
      keyBinding: true,
      statusManagement: true,
      batchSize: 5,
      refreshTokens: true,
    },
  },
  minimal: {
    summary:
      "The spec's minimal body (§2.1): no keyChainId, so the tenant's default key chain signs (X-Default-Key-Chain)",
    value: {
      id: 'visitor-pass',
      config: { format: 'dc+sd-jwt', vct: 'https://credentials.example.com/types/visitor-pass' },
      fields: [{ path: ['visitor_name'], type: 'string', mandatory: true, disclosable: true }],
    },
  },
})

requestExamples.add(zPresentationConfigInput, {
  sdJwtVc: {
    summary: 'DCQL for an SD-JWT VC: name and department from the employee badge',
    value: {
      id: BADGE_CHECK,
      description: 'Reception: is the visitor an ACME employee, and of which department',
      dcqlQuery: {
        credentials: [
          {
            id: 'badge',
            format: 'dc+sd-jwt',
            meta: { vct_values: [BADGE_VCT] },
            claims: [{ path: ['given_name'] }, { path: ['family_name'] }, { path: ['department'] }],
          },
        ],
      },
      lifetimeSeconds: 300,
      responseMode: 'direct_post.jwt',
      keyChainId: KEY_CHAIN,
      webhookEndpointId: WEBHOOK,
    },
  },
  mdoc: {
    summary: 'DCQL for an mdoc: age over 18 from a mobile driving licence, same-device',
    value: {
      id: AGE_CHECK,
      description: 'Online shop: age check before checkout',
      dcqlQuery: {
        credentials: [
          {
            id: 'mdl',
            format: 'mso_mdoc',
            meta: { doctype_value: MDL_DOCTYPE },
            claims: [{ path: [MDL_NAMESPACE, 'age_over_18'], values: [true], intent_to_retain: false }],
          },
        ],
      },
      lifetimeSeconds: 600,
      responseMode: 'direct_post.jwt',
      redirectUri: 'https://shop.acme.example/checkout/age-verified',
      keyChainId: KEY_CHAIN,
      clientIdPrefix: 'x509_san_dns',
      dcApi: {
        protocols: ['openid4vp-v1-signed', 'org-iso-mdoc', 'openid4vp-v1-unsigned'],
        origins: ['https://shop.acme.example'],
      },
    },
  },
  redirectUriPrefix: {
    summary: 'Unsigned same-device request: client_id redirect_uri:<response_uri> (OpenID4VP 1.0 §5.9.3)',
    description:
      'The request is passed by value in `authorizationRequestUri` and is not signed: wallets cannot authenticate the verifier, and those that require signed requests refuse it. The key chain is not used to sign. A `verifierAttestation` is refused with this prefix.',
    value: {
      id: 'badge-same-device',
      dcqlQuery: {
        credentials: [
          {
            id: 'badge',
            format: 'dc+sd-jwt',
            meta: { vct_values: [BADGE_VCT] },
            claims: [{ path: ['department'] }],
          },
        ],
      },
      responseMode: 'direct_post',
      redirectUri: 'https://intranet.acme.example/badge-checked',
      keyChainId: KEY_CHAIN,
      clientIdPrefix: 'redirect_uri',
    },
  },
  verifierAttestation: {
    summary: 'Requests signed under a Verifier Attestation JWT (OpenID4VP 1.0 §5.9.3, §12)',
    description:
      'The attestation is issued by a party wallets trust, to `sub` = `{PUBLIC_URL}/verifiers/{tenant}` with `cnf.jwk` = the public key of `keyChainId` (`GET /api/key-chains/{id}`). It is checked at save (typ, iss, sub, exp, cnf) and sent in the JOSE header `jwt` of each request object; the client id is `verifier_attestation:{PUBLIC_URL}/verifiers/{tenant}`. The JWT shown attests the published example key of the `import` key chain example, with a placeholder signature.',
    value: {
      id: 'badge-attested',
      dcqlQuery: {
        credentials: [
          {
            id: 'badge',
            format: 'dc+sd-jwt',
            meta: { vct_values: [BADGE_VCT] },
            claims: [{ path: ['given_name'] }],
          },
        ],
      },
      keyChainId: 'acme-imported',
      clientIdPrefix: 'verifier_attestation',
      verifierAttestation:
        'eyJhbGciOiJFUzI1NiIsInR5cCI6InZlcmlmaWVyLWF0dGVzdGF0aW9uK2p3dCJ9.eyJpc3MiOiJodHRwczovL2F0dGVzdGF0aW9ucy5yZWdpc3RyYXIuZXhhbXBsZSIsInN1YiI6Imh0dHBzOi8vdmVyaWZpZXIuZXhhbXBsZS5jb20vdmVyaWZpZXJzL2FjbWUiLCJpYXQiOjE3NjcyMjU2MDAsImV4cCI6MTc5ODc2MTYwMCwiY25mIjp7Imp3ayI6eyJrdHkiOiJFQyIsImNydiI6IlAtMjU2IiwieCI6Ikt1cWdicnJmS2Q4M3J0SzVvZW1CYWp6UXJFR211b1RBNlRfQm91THI2d1EiLCJ5IjoiR2UzLWd0bzEyZUY3Z2JSSlhpeU44a0xHX2V2SVlRWF9sTUR3TjM1b0FWbyJ9fX0.BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw',
    },
  },
})

requestExamples.add(zOfferCreate, {
  preAuthorizedWithTxCode: {
    summary: 'Pre-authorized code with a transaction code, claims inline (the SD-JWT VC badge)',
    description:
      'The numeric code is generated and returned once as `txCode`; send it to the holder another way (e-mail, letter).',
    value: {
      credentialConfigurationIds: [BADGE],
      grant: 'pre-authorized_code',
      txCode: { inputMode: 'numeric', length: 6, description: 'The 6 digits HR sent you by e-mail' },
      claims: {
        [BADGE]: {
          given_name: 'Erika',
          family_name: 'Mustermann',
          employee_id: 'E-10442',
          department: 'Research',
          employed_since: '2019-04-01',
          address: { locality: 'Berlin' },
        },
      },
      lifetimeSeconds: 900,
      byReference: true,
      statusHandle: STATUS_HANDLE,
    },
  },
  authorizationCode: {
    summary: 'Authorization code grant: the holder logs in (the mdoc driving licence)',
    description:
      'No claims: they come from the login and the attribute provider. The offer carries an `issuer_state` that binds the wallet’s authorization request to it.',
    value: {
      credentialConfigurationIds: [LICENCE],
      grant: 'authorization_code',
      lifetimeSeconds: 3600,
      statusHandle: 'licence-B-2024-118',
    },
  },
})

requestExamples.add(zPresentationRequestCreate, {
  crossDevice: {
    summary: 'Cross-device: a QR code for the employee badge check',
    value: { presentationConfigId: BADGE_CHECK },
  },
  sameDevice: {
    summary: 'Same-device: the age check, the wallet sends the user back to the shop',
    value: {
      presentationConfigId: AGE_CHECK,
      redirectUri: 'https://shop.acme.example/checkout/age-verified?order=4711',
      lifetimeSeconds: 300,
    },
  },
  sameDeviceUnsigned: {
    summary: 'Same-device, unsigned (redirect_uri prefix): the whole request is in authorizationRequestUri',
    value: { presentationConfigId: 'badge-same-device' },
  },
  digitalCredentialsApi: {
    summary: 'From the shop’s web page, through the browser (W3C Digital Credentials API)',
    description:
      'The answer’s `dcApi.requests` go to `navigator.credentials.get` on a page of `origin`; the page posts the browser’s answer to `dcApi.responseUri`. `authorizationRequestUri` stays the QR code fallback for browsers without the API. The origin must be one of the configuration’s `dcApi.origins` when it lists any.',
    value: { presentationConfigId: AGE_CHECK, transport: 'dc-api', origin: 'https://shop.acme.example' },
  },
})

requestExamples.add(zSessionResultRequest, {
  responseCode: {
    summary: 'The `response_code` of the wallet’s redirect',
    value: { responseCode: 'v7sQk1Zp3Jc9yN0hQeR2bA' },
  },
})

requestExamples.add(zSessionStatusChange, {
  revoke: { summary: 'Revoke (final)', value: { status: 'revoked' } },
  suspend: { summary: 'Suspend', value: { status: 'suspended' } },
  reinstate: { summary: 'Reinstate a suspended credential', value: { status: 'valid' } },
})

requestExamples.add(zHandleStatusChange, {
  revoke: {
    summary: 'Revoke the credentials of a contract (final)',
    value: { handle: STATUS_HANDLE, status: 'revoked' },
  },
  suspend: { summary: 'Suspend them', value: { handle: STATUS_HANDLE, status: 'suspended' } },
  reinstate: {
    summary: 'Reinstate suspended ones',
    value: { handle: STATUS_HANDLE, status: 'valid' },
  },
})

const typeMetadata = {
  description: 'Employee badge of the ACME Corporation',
  display: [
    { locale: 'en-US', name: 'ACME employee badge', rendering: { simple: { background_color: '#12107c' } } },
  ],
}

/** The badge's TS11 schema metadata, its schema URI's format and vct taken from the configuration. */
const badgeTs11 = {
  version: '1.0.0',
  rulebookURI: 'https://credentials.example.com/rulebooks/employee-badge/1.0.0.md',
  attestationLoS: 'iso_18045_basic',
  bindingType: 'key',
  schemaURIs: [
    { credentialConfigId: BADGE, uri: 'https://credentials.example.com/schemas/employee-badge.json' },
  ],
} as const

requestExamples.add(zSchemaMetadataSign, {
  fromConfiguration: {
    summary: 'Derive the document from the SD-JWT VC configuration',
    value: { credentialConfigId: BADGE },
  },
  withMembers: {
    summary: 'Derive it and add members on top',
    value: { credentialConfigId: BADGE, metadata: typeMetadata },
  },
  peerTs11: {
    summary:
      "The peer product's form (EUDIPLO): TS11 schema metadata in `config`, schema URI filled from the configuration",
    value: {
      config: {
        ...badgeTs11,
        schemaURIs: [...badgeTs11.schemaURIs],
        trustedAuthorities: [
          { frameworkType: 'etsi_tl', value: 'https://trust.example.eu/lotl.xml', isLoTE: true },
        ],
      },
      credentialConfigId: BADGE,
    },
  },
  peerTs11Submitted: {
    summary:
      "The peer product's form, submitted to the tenant's registrar: an attestation id is reserved there, signed in, and the JWS submitted",
    value: {
      config: { ...badgeTs11, schemaURIs: [...badgeTs11.schemaURIs] },
      credentialConfigId: BADGE,
      submitToRegistrar: true,
    },
  },
  document: {
    summary: 'A document of your own, signed with a key chain',
    value: {
      metadata: {
        vct: 'https://credentials.example.com/types/visitor-pass',
        name: 'Visitor pass',
        claims: [{ path: ['visitor_name'], display: [{ locale: 'en-US', label: 'Visitor' }], sd: 'always' }],
      },
      keyChainId: KEY_CHAIN,
    },
  },
})

requestExamples.add(zSchemaMetadataSignVersion, {
  first: {
    summary: 'The first version of the badge type',
    value: { credentialConfigId: BADGE, version: '1.0.0' },
  },
  next: {
    summary: 'A next version, chained to the previous one',
    value: {
      credentialConfigId: BADGE,
      metadata: typeMetadata,
      version: '1.1.0',
      previousIntegrity: 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
    },
  },
})

requestExamples.add(zRegistrarConfigInput, {
  registrar: {
    summary: 'The national registrar and the tenant’s client there',
    value: {
      baseUrl: 'https://registrar.example.eu/api',
      tokenUrl: 'https://registrar.example.eu/oauth2/token',
      clientId: TENANT,
      clientSecret: 'registrar-client-secret-0123',
    },
  },
})

requestExamples.add(zFederationMembershipInput, {
  intermediate: {
    summary: 'Issuer and verifier under a national intermediate, chains ending at the federation’s anchor',
    value: {
      keyChainId: 'federation',
      authorityHints: ['https://intermediate.example.eu'],
      trustAnchors: [
        {
          entityId: 'https://anchor.example.eu',
          jwks: {
            keys: [
              {
                kty: 'EC',
                crv: 'P-256',
                kid: 'anchor-2026',
                x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
                y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
              },
            ],
          },
        },
      ],
      lifetimeSeconds: 86400,
      organizationName: 'ACME Corporation',
    },
  },
})

requestExamples.add(zRelyingPartyRegistration, {
  verifierAndIssuer: {
    summary: 'Register as relying party and attestation provider',
    value: {
      name: 'ACME Corporation',
      roles: ['verifier', 'issuer'],
      identifiers: { LEI: '5299000J2N45DDNE4Y28', VAT: 'DE123456789' },
    },
  },
})

requestExamples.add(zAccessCertificateRequest, {
  accessCertificate: {
    summary: 'An access certificate for the signing key chain',
    value: { keyChainId: KEY_CHAIN, dnsNames: ['credentials.example.com'] },
  },
})

requestExamples.add(zRegistrationCertificateRequest, {
  registrationCertificate: {
    summary: 'A registration certificate for the badge check',
    value: {
      presentationConfigId: BADGE_CHECK,
      purpose: [
        { lang: 'en', content: 'Checks that you work at ACME before letting you in' },
        { lang: 'de', content: 'Prüft, ob Sie bei ACME arbeiten, bevor Sie eingelassen werden' },
      ],
      privacyPolicyUri: 'https://acme.example/privacy',
      supportUri: 'mailto:privacy@acme.example',
    },
  },
})

/**
 * The examples of a route's body schema: of the schema itself, or of the one it wraps (an
 * optional body is `X.nullish()`).
 */
export function examplesOf(schema: unknown) {
  let current = schema as z.ZodType | undefined
  while (current instanceof z.ZodType) {
    const examples = requestExamples.get(current)
    if (examples) return examples
    current =
      current instanceof z.ZodOptional || current instanceof z.ZodNullable
        ? (current.unwrap() as z.ZodType)
        : undefined
  }
  return undefined
}
