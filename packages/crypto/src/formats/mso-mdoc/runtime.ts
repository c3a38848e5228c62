import { queriedTypes } from '@credential-service/core-domain'
import { base64url } from 'jose'
import { issueMdoc } from '../../mdoc/issue'
import { verifyMdocPresentation } from '../../mdoc/verify'
import type { FormatRuntime } from '../format-runtime'

/** ISO 18013-5 mdoc: IssuerSigned, presented as a DeviceResponse (OpenID4VP 1.0 Appendix B.2). */
export const mdocRuntime: FormatRuntime<'mso_mdoc'> = {
  format: 'mso_mdoc',
  issue: async (options) => {
    // The MSO always holds a deviceKey: the issuer refuses a request without a holder key first.
    if (!options.holderJwk) throw new Error('an mdoc is issued to a device key')
    const issued = await issueMdoc({
      signer: options.signer,
      docType: options.config.docType,
      namespaces: options.claims as Record<string, Record<string, unknown>>,
      deviceJwk: options.holderJwk,
      signedAt: options.issuedAt,
      validFrom: options.issuedAt,
      validUntil: options.expiresAt,
      fullDates: new Set(
        options.fields.filter((f) => f.type === 'date').map((f) => `${f.namespace}/${f.path[0]}`),
      ),
      status: options.status,
    })
    // OpenID4VCI 1.0 Appendix A.2.4: the credential is the base64url IssuerSigned.
    return base64url.encode(issued)
  },
  verify: ({ presentation, query, binding, trust }) =>
    verifyMdocPresentation({
      presentation,
      docType: queriedTypes(query)?.[0] ?? '',
      transcript: binding.mdocTranscript,
      trustedAuthorities: query.trusted_authorities,
      ...trust,
    }),
  statusListViews: [],
}
