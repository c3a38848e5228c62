import { randomBytes } from 'node:crypto'
import type { KeyChainCreate, SigningAlgorithm } from '@credential-service/core-domain'
import { InvalidInputError, UpstreamError } from '@credential-service/core-domain'
import {
  createCertificate,
  generateKeyPair,
  importPrivateKey,
  type JwkCipher,
  jwkContext,
  type KeyPairJwks,
  type KeyProvider,
  KeyProviderError,
  type KmsProvider,
  type ProvidedKey,
  parseCertificateChain,
  thumbprint,
} from '@credential-service/crypto'
import type { KeyChainPatch, NewKeyChainRow } from '@credential-service/db-schema'
import { PROVIDER_VARIABLES } from '@credential-service/server-kit'
import type { JWK } from 'jose'

/** Certificates of generated keys outlive one rotation period comfortably. */
const DEFAULT_VALIDITY_DAYS = 365
const ROOT_VALIDITY_DAYS = 3650

/** Where a key chain's key lives when not in the database. */
export type ExternalProvider = Exclude<KmsProvider, 'db'>

export interface MaterialContext {
  tenantId: string
  keyChainId: string
  cipher: JwkCipher
  providers: Partial<Record<ExternalProvider, KeyProvider>>
  now: Date
}

type ActiveColumns = Pick<
  NewKeyChainRow,
  'activeJwk' | 'activeKid' | 'activePublicJwk' | 'activeCertificates' | 'certificateMode' | 'algorithm'
>

const invalid = (path: string, message: string) => new InvalidInputError(message, [{ path, message }])

/** `: set A, B` naming what a provider needs (README), or nothing when it needs no variable. */
const variablesOf = (kmsProvider: ExternalProvider) => {
  const { required } = PROVIDER_VARIABLES[kmsProvider]
  return required.length ? ` (set ${required.join(', ')})` : ''
}

function configuredProvider(context: MaterialContext, kmsProvider: ExternalProvider): KeyProvider {
  const provider = context.providers[kmsProvider]
  if (!provider)
    throw invalid(
      'body.kmsProvider',
      `key chain '${context.keyChainId}': the ${kmsProvider} provider is not configured on this service${variablesOf(kmsProvider)}`,
    )
  return provider
}

/**
 * A provider failure as the caller's answer, naming the key chain: an unknown key names
 * `externalKeyId`, a provider this service cannot use (a PKCS#11 module or token missing, a PIN
 * refused) names `kmsProvider` (400 both); anything else is the provider's fault (502).
 */
function providerFailure(context: MaterialContext, error: unknown): Error {
  const name = `key chain '${context.keyChainId}'`
  if (error instanceof KeyProviderError && error.reason === 'not_found') {
    return invalid('body.externalKeyId', `${name}: ${error.message}`)
  }
  if (error instanceof KeyProviderError && error.reason === 'misconfigured') {
    return invalid('body.kmsProvider', `${name}: ${error.message}`)
  }
  return new UpstreamError(`${name}: ${(error as Error).message}`, { cause: error })
}

/** Reads a provider's key; a provider failure becomes a clear error naming the key chain. */
export async function describeExternalKey(
  context: MaterialContext,
  kmsProvider: ExternalProvider,
  externalKeyId: string,
): Promise<ProvidedKey> {
  const provider = configuredProvider(context, kmsProvider)
  try {
    return await provider.describe(externalKeyId)
  } catch (error) {
    throw providerFailure(context, error)
  }
}

/**
 * Makes a new key in a provider that can (a PKCS#11 token: sensitive, not extractable; Azure Key
 * Vault and Cloud KMS: never exported), named after the key chain with a random suffix, so that two
 * tenants' chains of one name never meet. The provider may answer another id (Azure: `name/version`
 * pinned; Cloud KMS: the key's first version), which is the one stored.
 */
export async function generateExternalKey(
  context: MaterialContext,
  kmsProvider: ExternalProvider,
  alg: SigningAlgorithm,
): Promise<ProvidedKey & { externalKeyId: string }> {
  const provider = configuredProvider(context, kmsProvider)
  if (!provider.generate) {
    throw invalid(
      'body.kmsProvider',
      `key chain '${context.keyChainId}': ${kmsProvider} keys are made in the provider`,
    )
  }
  const externalKeyId = `${context.tenantId}/${context.keyChainId}/${randomBytes(4).toString('hex')}`
  try {
    const made = await provider.generate(externalKeyId, alg)
    return { ...made, externalKeyId: made.externalKeyId ?? externalKeyId }
  } catch (error) {
    throw providerFailure(context, error)
  }
}

/**
 * Hands an imported private key to a provider that takes one (Azure Key Vault: Import Key), named
 * like a generated key; the provider must answer the same public key, which is what gets stored.
 */
export async function importExternalKey(
  context: MaterialContext,
  kmsProvider: ExternalProvider,
  pair: KeyPairJwks,
): Promise<ProvidedKey & { externalKeyId: string }> {
  const provider = configuredProvider(context, kmsProvider)
  if (!provider.importKey) {
    throw invalid(
      'body.kmsProvider',
      `key chain '${context.keyChainId}': ${kmsProvider} takes no imported keys`,
    )
  }
  if (pair.alg === 'EdDSA') {
    throw invalid(
      'body.privateKey',
      `key chain '${context.keyChainId}': ${kmsProvider} holds P-256 and P-384 keys only`,
    )
  }
  const externalKeyId = `${context.tenantId}/${context.keyChainId}/${randomBytes(4).toString('hex')}`
  let stored: ProvidedKey
  try {
    stored = await provider.importKey(externalKeyId, pair.privateJwk, pair.alg)
  } catch (error) {
    throw providerFailure(context, error)
  }
  if ((await thumbprint(stored.publicJwk)) !== pair.kid) {
    throw new UpstreamError(
      `key chain '${context.keyChainId}': ${kmsProvider} answered another public key than the one imported`,
    )
  }
  return { ...stored, externalKeyId: stored.externalKeyId ?? externalKeyId }
}

/** The active key columns of a key held by a provider: its public JWK only. */
export async function externalActiveColumns(
  context: MaterialContext,
  key: ProvidedKey & { externalKeyId: string },
  certificates: string[],
  mode: string,
): Promise<ActiveColumns & Pick<NewKeyChainRow, 'externalKeyId'>> {
  return {
    externalKeyId: key.externalKeyId,
    algorithm: key.alg,
    activeJwk: context.cipher.encrypt(key.publicJwk, jwkContext(context.tenantId, context.keyChainId)),
    activeKid: await thumbprint(key.publicJwk),
    activePublicJwk: key.publicJwk,
    activeCertificates: certificates,
    certificateMode: mode,
  }
}

export async function verifiedChain(
  pems: string[],
  publicJwk: JWK,
  path: string,
  now: Date,
): Promise<string[]> {
  try {
    return (await parseCertificateChain(pems, publicJwk, now)).pem
  } catch (error) {
    throw invalid(path, (error as Error).message)
  }
}

export interface CertificatePlan {
  mode: 'self-signed' | 'internal-ca'
  subject: string
  validityDays: number
  dnsNames: string[]
  /**
   * The tenant's credential issuer identifier: issuer alternative name of generated certificates,
   * and the leaf's SAN URI, as SD-JWT VC §3.5 asks of the `iss` of credentials signed with `x5c`.
   */
  issuerUri: string
  /** Where the chain's root publishes its CRL (internal-ca only): `crlUriOf`. */
  crlUri?: string
}

/** The CRL distribution point of an internal CA's leaves: served by the tenant's issuer. */
export const crlUriOf = (issuerUri: string, keyChainId: string) =>
  `${issuerUri}/crl/${encodeURIComponent(keyChainId)}`

/** The subject with `C=<country>` added when it names no country yet. */
export function withCountry(subject: string, country: string | undefined): string {
  if (!country || /(^|,)\s*C=/i.test(subject)) return subject
  return `${subject},C=${country}`
}

/**
 * A leaf certificate for a db key: self-signed, or issued by the chain's root. Its SAN names the
 * tenant's issuer identifier (URI) and, by default, the host of PUBLIC_URL (dNSName), so the `iss`
 * of the SD-JWT VCs it signs matches it (SD-JWT VC §3.5). It follows the
 * ISO 18013-5 Document Signer profile (Annex B.1.4: mdlDS extended key usage, key usage
 * digitalSignature only, authority and subject key identifiers, issuer alternative name, and,
 * when an internal CA issues it, the CRL distribution point where the issuer serves that CA's CRL),
 * so one key chain signs mdoc and SD-JWT credentials alike.
 */
export async function certifyLocalKey(
  pair: { publicJwk: JWK; privateJwk?: JWK },
  plan: CertificatePlan,
  root: { privateJwk: JWK; certificate: string } | undefined,
  now: Date,
): Promise<string> {
  const issuerPrivateJwk = root?.privateJwk ?? pair.privateJwk
  // A key in a provider has no private JWK here: only an internal CA certifies it.
  if (!issuerPrivateJwk) throw new Error('a self-signed certificate needs the private key')
  return createCertificate({
    subjectPublicJwk: pair.publicJwk,
    subject: plan.subject,
    issuerPrivateJwk,
    ...(root ? { issuerCertificate: root.certificate } : {}),
    validityDays: plan.validityDays,
    dnsNames: plan.dnsNames,
    // SD-JWT VC §3.5: a credential's iss (the issuer URL) is a URI SAN of its x5c leaf.
    uris: [plan.issuerUri],
    documentSigner: true,
    issuerAltNameUri: plan.issuerUri,
    ...(root && plan.crlUri ? { crlDistributionPoints: [plan.crlUri] } : {}),
    now,
  })
}

export function localActiveColumns(
  context: MaterialContext,
  pair: KeyPairJwks,
  certificates: string[],
  mode: string,
): ActiveColumns {
  return {
    algorithm: pair.alg,
    activeJwk: context.cipher.encrypt(pair.privateJwk, jwkContext(context.tenantId, context.keyChainId)),
    activeKid: pair.kid,
    activePublicJwk: pair.publicJwk,
    activeCertificates: certificates,
    certificateMode: mode,
  }
}

/** The key material columns of a new key chain, for each way of creating one. */
export async function createMaterial(
  context: MaterialContext,
  input: KeyChainCreate,
  defaults: { subject: string; dnsNames: string[]; issuerUri: string },
): Promise<Omit<NewKeyChainRow, 'tenantId' | 'id'>> {
  const base = { subject: defaults.subject, dnsNames: defaults.dnsNames }
  switch (input.source) {
    case 'generate': {
      const plan: CertificatePlan = {
        mode: input.certificate?.mode ?? 'internal-ca',
        subject: withCountry(input.certificate?.subject ?? defaults.subject, input.certificate?.country),
        validityDays: input.certificate?.validityDays ?? DEFAULT_VALIDITY_DAYS,
        dnsNames: input.certificate?.dnsNames ?? defaults.dnsNames,
        issuerUri: defaults.issuerUri,
        crlUri: crlUriOf(defaults.issuerUri, context.keyChainId),
      }
      if (input.kmsProvider !== 'db' && plan.mode !== 'internal-ca') {
        throw invalid(
          'body.certificate.mode',
          `a key generated on a ${input.kmsProvider} token is certified by the key chain's internal CA (internal-ca); self-signed needs the private key`,
        )
      }
      const root =
        plan.mode === 'internal-ca' ? await internalRoot(context, plan, input.algorithm) : undefined
      const rootColumns = root ? { rootJwk: root.encryptedJwk, rootCertificate: root.certificate } : {}
      const named = { ...base, subject: plan.subject, dnsNames: plan.dnsNames, ...rootColumns }
      if (input.kmsProvider !== 'db') {
        const key = await generateExternalKey(context, input.kmsProvider, input.algorithm)
        const leaf = await certifyLocalKey(key, plan, root, context.now)
        return {
          ...named,
          kmsProvider: input.kmsProvider,
          ...(await externalActiveColumns(context, key, [leaf], plan.mode)),
        }
      }
      const pair = await generateKeyPair(input.algorithm)
      const leaf = await certifyLocalKey(pair, plan, root, context.now)
      return { ...named, kmsProvider: 'db', ...localActiveColumns(context, pair, [leaf], plan.mode) }
    }
    case 'import': {
      let pair: KeyPairJwks
      try {
        pair = await importPrivateKey(input.privateKey as JWK | string)
      } catch (error) {
        throw invalid('body.privateKey', (error as Error).message)
      }
      // Certified while the private key is still here: self-signed unless a chain is given.
      const certificates = input.certificateChain
        ? await verifiedChain(input.certificateChain, pair.publicJwk, 'body.certificateChain', context.now)
        : [
            await certifyLocalKey(
              pair,
              {
                mode: 'self-signed',
                subject: defaults.subject,
                validityDays: DEFAULT_VALIDITY_DAYS,
                dnsNames: defaults.dnsNames,
                issuerUri: defaults.issuerUri,
              },
              undefined,
              context.now,
            ),
          ]
      const mode = input.certificateChain ? 'provided' : 'self-signed'
      if (input.kmsProvider !== 'db') {
        const key = await importExternalKey(context, input.kmsProvider, pair)
        return {
          ...base,
          kmsProvider: input.kmsProvider,
          ...(await externalActiveColumns(context, key, certificates, mode)),
        }
      }
      return { ...base, kmsProvider: 'db', ...localActiveColumns(context, pair, certificates, mode) }
    }
    case 'external': {
      const key = await describeExternalKey(context, input.kmsProvider, input.externalKeyId)
      const certificates = input.certificateChain
        ? await verifiedChain(input.certificateChain, key.publicJwk, 'body.certificateChain', context.now)
        : []
      return {
        ...base,
        kmsProvider: input.kmsProvider,
        ...(await externalActiveColumns(
          context,
          { ...key, externalKeyId: key.externalKeyId ?? input.externalKeyId },
          certificates,
          input.certificateChain ? 'provided' : 'none',
        )),
      }
    }
  }
}

/** The root of a key chain's internal CA: a db key (its private JWK encrypted) and its certificate. */
async function internalRoot(context: MaterialContext, plan: CertificatePlan, alg: SigningAlgorithm) {
  const rootPair = await generateKeyPair(alg)
  const certificate = await createCertificate({
    subjectPublicJwk: rootPair.publicJwk,
    issuerPrivateJwk: rootPair.privateJwk,
    subject: /CN=/.test(plan.subject)
      ? plan.subject.replace(/CN=([^,]+)/, 'CN=$1 Root CA')
      : `CN=Root CA,${plan.subject}`,
    validityDays: ROOT_VALIDITY_DAYS,
    ca: true,
    issuerAltNameUri: plan.issuerUri,
    now: context.now,
  })
  return {
    privateJwk: rootPair.privateJwk,
    certificate,
    encryptedJwk: context.cipher.encrypt(
      rootPair.privateJwk,
      jwkContext(context.tenantId, context.keyChainId),
    ),
  }
}

/** Columns that move the active key to the previous slot for a grace period. */
export function retireActive(
  row: {
    activeJwk: string
    activeKid: string
    activePublicJwk: JWK
    activeCertificates: string[]
    certificateMode: string
  },
  expiresAt: Date,
): KeyChainPatch {
  return {
    previousJwk: row.activeJwk,
    previousKid: row.activeKid,
    previousPublicJwk: row.activePublicJwk,
    previousCertificates: row.activeCertificates,
    previousCertificateMode: row.certificateMode,
    previousExpiresAt: expiresAt,
  }
}
