import { PresentationRejected } from '../../presentation'
import type { FormatRuntime } from '../format-runtime'
import { bitstringStatusEntries } from './bitstring-status-list'
import { issueVcJwt } from './issue'
import { verifyVcPresentation } from './presentation'
import { bitstringStatusListView } from './status-list-view'

/**
 * W3C VC as a JWT (OpenID4VCI 1.0 Appendix A.1.1): a VCDM 2.0 vc+jwt bound to the proof key by
 * `cnf.jwk`, its status a BitstringStatusListEntry per purpose, presented in a VP JWT over the nonce and audience (OpenID4VP 1.0 Appendix B.1).
 */
export const jwtVcJsonRuntime: FormatRuntime<'jwt_vc_json'> = {
  format: 'jwt_vc_json',
  issue: (options) =>
    issueVcJwt({
      signer: options.signer,
      issuer: options.issuer,
      type: options.config.type,
      context: options.config.context,
      subject: (options.claims.credentialSubject ?? {}) as Record<string, unknown>,
      issuedAt: options.issuedAt,
      expiresAt: options.expiresAt,
      holderJwk: options.holderJwk,
      credentialStatus: options.status && bitstringStatusEntries(options.status.idx, options.status.uri),
    }),
  statusListViews: [bitstringStatusListView],
  verify: async ({ presentation, query, binding, trust }) => {
    if (typeof presentation !== 'string') throw new PresentationRejected('a VP JWT is a string')
    if (!('type_values' in query.meta)) throw new PresentationRejected('the query has no meta.type_values')
    const verified = await verifyVcPresentation({
      presentation,
      typeValues: query.meta.type_values,
      nonce: binding.nonce,
      audiences: binding.audiences,
      requireHolderBinding: query.require_cryptographic_holder_binding !== false,
      trustedAuthorities: query.trusted_authorities,
      ...trust,
    })
    return verified.credential
  },
}
