import type { ClaimField } from '../../contract/credential-config'
import type { FormatIssue } from '../format-spec'

/**
 * A jwt_vc_json field is a claim about the subject: its path starts at `credentialSubject`
 * (OpenID4VCI 1.0 Appendix A.1.1 metadata and OpenID4VP 1.0 Appendix B.1 queries both address
 * claims from the credential's root), and `credentialSubject.id` is the holder's key, which the
 * issuer sets. Nothing is selectively disclosable: a VC-JWT is presented whole.
 */
export function jwtVcJsonFieldIssues(field: ClaimField): FormatIssue[] {
  const [top, claim] = field.path
  if (top !== 'credentialSubject' || claim === undefined)
    return [
      { path: 'path', message: "jwt_vc_json claims are under 'credentialSubject': ['credentialSubject', …]" },
    ]
  if (claim === 'id' && field.path.length === 2)
    return [{ path: 'path', message: "'credentialSubject.id' is set by the issuer (the holder's key)" }]
  if (field.disclosable)
    return [{ path: 'disclosable', message: 'jwt_vc_json credentials have no selective disclosure' }]
  return []
}
