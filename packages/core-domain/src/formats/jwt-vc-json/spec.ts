import type { FormatSpec } from '../format-spec'
import { VCDM2_CONTEXT, zJwtVcJsonConfig, zJwtVcJsonDcqlMeta } from './config'
import { jwtVcJsonFieldIssues } from './field-rules'
import { vcTypeKey, vcTypesOfKey } from './types'

/**
 * W3C VC signed as a JWT, not using JSON-LD (OpenID4VCI 1.0 Appendix A.1.1, OpenID4VP 1.0
 * Appendix B.1). The credential is VCDM 2.0 secured with VC-JOSE-COSE (`typ` vc+jwt); the holder
 * key the `jwk` proof proved is bound as `cnf.jwk` (docs/issuance.md).
 */
export const jwtVcJsonSpec: FormatSpec<typeof zJwtVcJsonConfig, typeof zJwtVcJsonDcqlMeta> = {
  format: 'jwt_vc_json',
  configSchema: zJwtVcJsonConfig,
  dcqlMetaSchema: zJwtVcJsonDcqlMeta,
  title: 'W3C VC (JWT)',
  typeMember: 'type',
  configInputs: [
    {
      member: 'type',
      label: 'VC types (type)',
      description: 'VerifiableCredential and its own types, e.g. UniversityDegreeCredential',
      list: true,
      required: true,
    },
    {
      member: 'context',
      label: '@context',
      description: `Contexts after ${VCDM2_CONTEXT} (optional)`,
      list: true,
      required: false,
    },
  ],
  typeOf: (config) => vcTypeKey(config.type),
  // A.1.1: "credential_definition: REQUIRED ... type: REQUIRED. Array designating the types".
  typeMetadata: (config) => ({ credential_definition: { type: config.type } }),
  namespacedFields: false,
  fieldIssues: jwtVcJsonFieldIssues,
  signingAlgValues: (signingAlg) => [signingAlg],
  // OpenID4VCI §12.2.4: the wallet proves a key as `jwk` in the proof header; the credential binds
  // it as `cnf.jwk` (VC-JOSE-COSE §3.3.2 recommends a proof-of-possession key).
  bindingMethod: 'jwk',
  // B.1.3 `alg_values` of the VC and the VP JWT: fully specified names (RFC 9864: Ed25519, not EdDSA).
  vpFormatsSupported: { alg_values: ['ES256', 'ES384', 'Ed25519'] },
  metaMember: 'type_values',
  queriedTypes: (meta) => meta.type_values.map(vcTypeKey),
  dcqlMeta: (types) => ({ type_values: types.map(vcTypesOfKey) }),
  intentToRetain: false,
  dcqlClaimIssues: () => [],
  selectiveDisclosure: false,
  holderKeyRequired: false,
  transactionData: false,
  annexC: false,
  typeMetadataDocument: false,
  namesIssuer: true,
  certificateCountry: false,
}
