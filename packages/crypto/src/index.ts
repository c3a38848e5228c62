export { ASYMMETRIC_JWS_ALGORITHMS } from './asymmetric-algorithms'
export { canonicalHash } from './canonical-hash'
export type { CheckCborOptions, CheckCborResult } from './cbor-guard'
export { CBOR_LIMITS, checkCbor } from './cbor-guard'
export type { CertificateFacts } from './certificate-facts'
export { certificateFacts, MDL_DOCUMENT_SIGNER_EKU } from './certificate-facts'
export type { CertificateOptions, ParsedChain } from './certificates'
export {
  createCertificate,
  createEmptyCrl,
  parseCertificateChain,
} from './certificates'
export type { ClaimsPath } from './claims-path'
export { selectClaims } from './claims-path'
export { verifierClientId } from './client-id'
export { readListOfTrustedEntities } from './etsi-lote'
export type { ListOfTrustedLists, TrustedListPointer } from './etsi-lotl'
export { readListOfTrustedLists } from './etsi-lotl'
export type { TrustedListContent } from './etsi-trusted-list'
export { readTrustedList, TrustedListError } from './etsi-trusted-list'
export type {
  EntityStatement,
  FederationConstraints,
  FederationRefusalKind,
} from './federation/entity-statement'
export { decodeEntityStatement, FederationTrustError } from './federation/entity-statement'
export type { EntityMetadata, MetadataPolicy } from './federation/metadata-policy'
export { applyMetadataPolicy, MetadataPolicyError, resolveMetadataPolicy } from './federation/metadata-policy'
export type { FetchFederationJwt, ResolveTrustChainOptions } from './federation/resolve-trust-chain'
export { entityConfigurationUrl, resolveTrustChain } from './federation/resolve-trust-chain'
export type { TrustChainResult, VerifyTrustChainOptions } from './federation/trust-chain'
export { verifyTrustChain } from './federation/trust-chain'
export type { FederationAnchor } from './federation/trust-marks'
export type {
  FormatRuntime,
  HolderBinding,
  IssueCredentialOptions,
  SignStatusListViewOptions,
  StatusListView,
  VerifyPresentationOptions,
} from './formats/format-runtime'
export type {
  BitstringEntry,
  IssueVcJwtOptions,
  VcPresentationCheck,
  VerifiedVc,
} from './formats/jwt-vc-json'
export {
  decodeBitstring,
  didJwkKey,
  issueVcJwt,
  signBitstringStatusList,
  verifyVcJwt,
  verifyVcPresentation,
} from './formats/jwt-vc-json'
export { allStatusListViews, formatRuntime, formatRuntimes } from './formats/registry'
export { subresourceIntegrity } from './integrity'
export { certificateNamesIssuer, issuerNameRefusal } from './issuer-san'
export { DecryptionError } from './json-cipher'
export type { JwkCipher } from './jwk-cipher'
export { createJwkCipher, fingerprintsMatch, JwkDecryptionError, masterSecretFingerprint } from './jwk-cipher'
export type { ActiveKeyMaterial, KmsProvider, SignerFactory, SignerFactoryOptions } from './key-chain-signer'
export { createSignerFactory, jwkContext, signWithKeyObject } from './key-chain-signer'
export type { KeyPairJwks } from './keys'
export { generateKeyPair, importPrivateKey, publicPart, thumbprint } from './keys'
export type { ManagementSigningKey, MasterKeyPurpose } from './master-secret'
export { deriveKeyMaterial, deriveManagementSigningKey } from './master-secret'
export type {
  AnnexCRequest,
  AnnexCRequestOptions,
  IssueMdocOptions,
  MdocCheck,
  MdocTranscript,
  OpenAnnexCResponseOptions,
  VerificationContext,
} from './mdoc'
export {
  annexCRequest,
  annexCSessionTranscript,
  createMdocContext,
  issueMdoc,
  jwkToCoseKey,
  msoStatusEntry,
  openAnnexCResponse,
  verifyMdocPresentation,
} from './mdoc'
export { isSelfSigned, parseCertificate, x5cEntry } from './parsed-certificates'
export type { PathProfile, PathValidation, ValidatePathOptions } from './path-validation'
export {
  ATTESTATION_PROFILE,
  ISSUER_PROFILE,
  MAX_CHAIN_LENGTH,
  MDOC_ISSUER_PROFILE,
  validatePath,
} from './path-validation'
export type { PresentationTrust, StatusListForm } from './presentation'
export { PresentationRejected } from './presentation'
export type { AwsKmsOptions } from './providers/aws-kms'
export { createAwsKmsProvider, derToJoseSignature } from './providers/aws-kms'
export type { AzureKeyVaultOptions } from './providers/azure-key-vault'
export { createAzureKeyVaultProvider } from './providers/azure-key-vault'
export type { GcpKmsOptions } from './providers/gcp-kms'
export { createGcpKmsProvider } from './providers/gcp-kms'
export type { KeyProviderCall, KeyProviderCallObserver } from './providers/metered'
export { meteredKeyProviders } from './providers/metered'
export type { Pkcs11Options } from './providers/pkcs11'
export { createPkcs11Provider } from './providers/pkcs11'
export type { KeyProvider, ProvidedKey } from './providers/provider'
export { KeyProviderError } from './providers/provider'
export type { KeyProviderOutcome } from './providers/traced'
export type { VaultOptions } from './providers/vault'
export { createVaultProvider } from './providers/vault'
export type { RequestKeyReference } from './request-object'
export { requestKeyReference, requestX5c, signRequestObject } from './request-object'
export type { IssueSdJwtVcOptions, SdJwtCheck } from './sd-jwt-vc'
export { disclosureFrame, issueSdJwtVc, verifySdJwtPresentation } from './sd-jwt-vc'
export type { SecretVerifier } from './secret-hash'
export { codeHash, createSecretVerifier, generateSecret, hashSecret, isLegacySecretHash } from './secret-hash'
export type { OfferClaims, PresentationResult, SessionDataCipher } from './session-data-cipher'
export { createSessionDataCipher } from './session-data-cipher'
export type { Signer, SigningAlgorithm } from './signer'
export { algorithmForJwk, hashFor, SIGNING_ALGORITHMS, signJws } from './signer'
export type { SignStatusListCwtOptions, StatusListCwt } from './status-list-cwt'
export { decodeStatusListCwt, STATUS_LIST_CWT_TYPE, signStatusListCwt } from './status-list-cwt'
export type { SignStatusListTokenOptions, StatusList, StatusListEntry } from './status-list-token'
export {
  inflateStatusList,
  MAX_STATUS_LIST_BYTES,
  readStatusList,
  StatusListError,
  signStatusListToken,
  statusAt,
  statusInList,
} from './status-list-token'
export type { ListCheckOptions } from './trust-list-checker'
export {
  checkListOfTrustedEntitiesOffThread,
  checkListOfTrustedListsOffThread,
  checkTrustedListOffThread,
  LIST_CHECK_BUDGET_MS,
} from './trust-list-checker'
export {
  anchorAuthorityKeyId,
  anchorAuthorityKeyIds,
  type TrustedAuthoritiesQuery,
  type TrustedListAnchors,
  type TrustedLists,
  trustedAuthoritiesRefusal,
} from './trusted-authorities'
export type { VerifierAttestationExpectations } from './verifier-attestation'
export { verifierAttestationIssues } from './verifier-attestation'
export { checkChain } from './x5c-chain'
export type { XmlPrescanLimits } from './xml-prescan'
export { prescanXml, XML_PRESCAN_LIMITS } from './xml-prescan'
