import type { FormatSpec } from '../format-spec'
import { jwtVcJsonFieldIssues } from './field-rules'
import { vcTypeKey, vcTypesOfKey } from './types'

/** JOSE algorithms of a VC-JWT and of the holder's VP JWT (OpenID4VP 1.0 B.1.3.1 `alg_values`). */
const JOSE_ALGS = ['ES256', 'ES384', 'Ed25519', 'EdDSA']

/**
 * W3C VC signed as a JWT, not using JSON-LD (OpenID4VCI 1.0 Appendix A.1.1, OpenID4VP 1.0
 * Appendix B.1). The credential is VCDM 2.0 secured with VC-JOSE-COSE (`typ` vc+jwt); the holder
 * key the `jwk` proof proved is bound as `credentialSubject.id`, a did:jwk (docs/credential-formats.md).
 */
export const jwtVcJsonSpec: FormatSpec<'jwt_vc_json'> = {
  format: 'jwt_vc_json',
  title: 'W3C VC (JWT)',
  typeMember: 'type',
  typeOf: (config) => vcTypeKey(config.type),
  // A.1.1: "credential_definition: REQUIRED … type: REQUIRED. Array designating the types".
  typeMetadata: (config) => ({ credential_definition: { type: config.type } }),
  namespacedFields: false,
  fieldIssues: jwtVcJsonFieldIssues,
  signingAlgValues: (signingAlg) => [signingAlg],
  // OpenID4VCI §12.2.4: the wallet proves a key as `jwk` in the proof header; the credential names
  // it as a did:jwk subject (what VCDM readers understand as the holder's identifier).
  bindingMethod: 'jwk',
  vpFormatsSupported: { alg_values: JOSE_ALGS.filter((alg) => alg !== 'EdDSA') },
  metaMember: 'type_values',
  queriedTypes: (meta) => ('type_values' in meta ? meta.type_values.map(vcTypeKey) : undefined),
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
