import type { FormatSpec } from '../format-spec'
import { zMdocConfig, zMdocDcqlMeta } from './config'

/**
 * `credential_signing_alg_values_supported` of an mdoc per key algorithm (OpenID4VCI 1.0 App. A.2.2,
 * checklist I-08): first the COSE id the IssuerAuth header carries (crypto `COSE_ALG`: -7, -35,
 * -8, the ids ISO 18013-5 §9.1.3.6 lists and its readers match literally), then the fully
 * specified id that header and the key's curve amount to (RFC 9864: ESP256 -9, ESP384 -51,
 * Ed25519 -19). RFC 9864 deprecates the polymorphic -8 but ISO 18013-5 readers know no -19, so
 * the header keeps -8 and both are advertised, as -7 and -9 are.
 */
const MDOC_SIGNING_ALGS: Record<string, number[]> = { ES256: [-7, -9], ES384: [-35, -51], EdDSA: [-8, -19] }

/** OpenID4VP 1.0 B.2.4: an mdoc claim is asked for by [namespace, element identifier]. */
const isElementPath = (path: unknown[]) => path.length === 2 && path.every((part) => typeof part === 'string')

/** ISO/IEC 18013-5 mdoc (OpenID4VCI 1.0 Appendix A.2, OpenID4VP 1.0 Appendix B.2). */
export const mdocSpec: FormatSpec<typeof zMdocConfig, typeof zMdocDcqlMeta> = {
  format: 'mso_mdoc',
  configSchema: zMdocConfig,
  dcqlMetaSchema: zMdocDcqlMeta,
  title: 'mdoc',
  typeMember: 'docType',
  configInputs: [
    {
      member: 'docType',
      label: 'Document type (docType)',
      description: 'e.g. org.iso.18013.5.1.mDL',
      list: false,
      required: true,
    },
  ],
  typeOf: (config) => config.docType,
  typeMetadata: (config) => ({ doctype: config.docType }),
  namespacedFields: true,
  fieldIssues: () => [],
  signingAlgValues: (signingAlg) => MDOC_SIGNING_ALGS[signingAlg] ?? [-7, -9],
  bindingMethod: 'cose_key',
  // B.2.2: a COSE header alg literally, or a fully specified id with the key's curve: -7 and -9
  // (ESP256) both cover ECDSA P-256, -35 and -51 (ESP384) ECDSA P-384; HAIP names -7 and -9.
  vpFormatsSupported: {
    issuerauth_alg_values: [-7, -9, -35, -51],
    deviceauth_alg_values: [-7, -9, -35, -51],
  },
  metaMember: 'doctype_value',
  queriedTypes: (meta) => [meta.doctype_value],
  dcqlMeta: (types) => ({ doctype_value: types[0] ?? '' }),
  intentToRetain: true,
  dcqlClaimIssues: (claim) =>
    isElementPath(claim.path)
      ? []
      : [{ path: 'path', message: 'mso_mdoc claim paths are exactly [namespace, element identifier]' }],
  selectiveDisclosure: true,
  holderKeyRequired: true,
  // Device-signed transaction data hashes are not verified: such a request is refused, not half-checked.
  transactionData: false,
  annexC: true,
  typeMetadataDocument: false,
  namesIssuer: false,
  certificateCountry: true,
}
