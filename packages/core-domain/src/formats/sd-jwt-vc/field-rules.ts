import type { ClaimField } from '../../contract/claim-field'
import type { FormatIssue } from '../format-spec'

/**
 * Claims the issuer sets that SD-JWT VC §3.2.2.2 (checklist F-03) forbids disclosing selectively:
 * a disclosable field at or under one of them is refused at configuration time.
 */
export const NON_DISCLOSABLE_CLAIMS = ['iss', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status'] as const

/**
 * Claims the issuer writes into every SD-JWT VC itself: a field of that name would be silently
 * replaced at issuance, so it is refused at configuration time whether disclosable or not.
 */
export const ISSUER_SET_CLAIMS = ['iss', 'iat', 'exp', 'cnf', 'vct', 'vct#integrity', 'status'] as const

/** An SD-JWT VC field is no claim the issuer sets, nor disclosable where §3.2.2.2 forbids it. */
export function sdJwtVcFieldIssues(field: ClaimField): FormatIssue[] {
  const top = field.path[0] as string
  if (field.disclosable && (NON_DISCLOSABLE_CLAIMS as readonly string[]).includes(top))
    return [
      { path: 'disclosable', message: `'${top}' must not be selectively disclosable (SD-JWT VC §3.2.2.2)` },
    ]
  if ((ISSUER_SET_CLAIMS as readonly string[]).includes(top))
    return [
      { path: 'path', message: `'${top}' is set by the issuer in every credential; it cannot be a field` },
    ]
  return []
}
