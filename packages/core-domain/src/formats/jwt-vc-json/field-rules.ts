import type { ClaimField } from '../../contract/claim-field'
import type { FormatIssue } from '../format-spec'

/**
 * A jwt_vc_json field is a claim about the subject: its path starts at `credentialSubject`
 * (OpenID4VCI 1.0 Appendix A.1.1 metadata and OpenID4VP 1.0 Appendix B.1 queries both address
 * claims from the credential's root; the other members of a credential are the issuer's).
 */
export function jwtVcJsonFieldIssues(field: ClaimField): FormatIssue[] {
  if (field.path[0] !== 'credentialSubject' || field.path.length < 2)
    return [
      {
        path: 'path',
        message: "jwt_vc_json claims are under 'credentialSubject': ['credentialSubject', ...]",
      },
    ]
  return []
}
