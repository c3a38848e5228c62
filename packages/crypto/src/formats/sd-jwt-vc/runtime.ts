import { queriedTypes } from '@credential-service/core-domain'
import { PresentationRejected } from '../../presentation'
import { issueSdJwtVc } from '../../sd-jwt-vc/issue'
import { verifySdJwtPresentation } from '../../sd-jwt-vc/verify'
import type { FormatRuntime } from '../format-runtime'

/** SD-JWT VC: an SD-JWT with a KB-JWT over the nonce and audience (OpenID4VP 1.0 Appendix B.3). */
export const sdJwtVcRuntime: FormatRuntime<'dc+sd-jwt'> = {
  format: 'dc+sd-jwt',
  issue: (options) =>
    issueSdJwtVc({
      signer: options.signer,
      issuer: options.issuer,
      vct: options.config.vct,
      issuedAt: options.issuedAt,
      expiresAt: options.expiresAt,
      holderJwk: options.holderJwk,
      claims: options.claims,
      disclosable: options.fields.filter((field) => field.disclosable).map((field) => field.path),
      decoys: 2,
      status: options.status,
    }),
  verify: async ({ presentation, query, binding, trust }) => {
    if (typeof presentation !== 'string') throw new PresentationRejected('an SD-JWT is a string')
    return verifySdJwtPresentation({
      presentation,
      vctValues: queriedTypes(query) ?? [],
      nonce: binding.nonce,
      audiences: binding.audiences,
      transactionData: binding.transactionData,
      requireHolderBinding: query.require_cryptographic_holder_binding !== false,
      trustedAuthorities: query.trusted_authorities,
      ...trust,
    })
  },
  statusListViews: [],
}
