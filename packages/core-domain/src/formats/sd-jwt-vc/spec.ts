import type { FormatSpec } from '../format-spec'
import { sdJwtVcFieldIssues } from './field-rules'

/** SD-JWT VC (draft-ietf-oauth-sd-jwt-vc; OpenID4VCI 1.0 Appendix A.3, OpenID4VP 1.0 Appendix B.3). */
export const sdJwtVcSpec: FormatSpec<'dc+sd-jwt'> = {
  format: 'dc+sd-jwt',
  title: 'SD-JWT VC',
  typeMember: 'vct',
  typeOf: (config) => config.vct,
  typeMetadata: (config) => ({ vct: config.vct }),
  namespacedFields: false,
  fieldIssues: sdJwtVcFieldIssues,
  signingAlgValues: (signingAlg) => [signingAlg],
  bindingMethod: 'jwk',
  // B.3.4: fully specified JOSE names (RFC 9864), `Ed25519`, never the polymorphic `EdDSA`.
  vpFormatsSupported: {
    'sd-jwt_alg_values': ['ES256', 'ES384', 'Ed25519'],
    'kb-jwt_alg_values': ['ES256', 'ES384', 'Ed25519'],
  },
  metaMember: 'vct_values',
  queriedTypes: (meta) => ('vct_values' in meta ? meta.vct_values : undefined),
  dcqlMeta: (types) => ({ vct_values: types }),
  intentToRetain: false,
  dcqlClaimIssues: () => [],
  selectiveDisclosure: true,
  holderKeyRequired: false,
  transactionData: true,
  annexC: false,
  typeMetadataDocument: true,
  namesIssuer: true,
  certificateCountry: false,
}
