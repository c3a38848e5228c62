import type { FormatSpec } from '../format-spec'
import { zSdJwtVcConfig, zSdJwtVcDcqlMeta } from './config'
import { sdJwtVcFieldIssues } from './field-rules'

/** SD-JWT VC (draft-ietf-oauth-sd-jwt-vc; OpenID4VCI 1.0 Appendix A.3, OpenID4VP 1.0 Appendix B.3). */
export const sdJwtVcSpec: FormatSpec<typeof zSdJwtVcConfig, typeof zSdJwtVcDcqlMeta> = {
  format: 'dc+sd-jwt',
  configSchema: zSdJwtVcConfig,
  dcqlMetaSchema: zSdJwtVcDcqlMeta,
  title: 'SD-JWT VC',
  typeMember: 'vct',
  configInputs: [
    {
      member: 'vct',
      label: 'Verifiable credential type (vct)',
      description: 'e.g. urn:eudi:pid:1',
      list: false,
      required: true,
    },
  ],
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
  queriedTypes: (meta) => meta.vct_values,
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
