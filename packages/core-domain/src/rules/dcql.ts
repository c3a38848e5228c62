import type { DcqlQuery } from '../contract/dcql'
import type { ValidationIssue } from '../errors'
import { allFormatSpecs, formatSpec, queriedTypes } from '../formats/registry'

/** Formats whose issuer may be trusted through OpenID Federation: the credential's `iss` is an entity id. */
export const FEDERATED_ISSUER_FORMATS = ['dc+sd-jwt', 'jwt_vc_json'] as const

/**
 * OpenID4VP 1.0 §6–7 rules a DCQL query must follow beyond its shape (checklist V-10): unique
 * credential ids; `meta` and each claim by the format's rules (formats/<name>/spec.ts: mdoc claim
 * paths of exactly `[namespace, element]`, `intent_to_retain` only there);
 * unique claim ids and paths; claim ids wherever `claim_sets` is used, and `claim_sets` naming
 * existing claims; `credential_sets` options naming existing credentials.
 */
export function checkDcqlQuery(query: DcqlQuery, prefix = 'body.dcqlQuery'): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  const add = (path: string, message: string) => issues.push({ path: `${prefix}.${path}`, message })
  const credentialIds = new Set<string>()
  const retaining = allFormatSpecs()
    .filter((spec) => spec.intentToRetain)
    .map((spec) => spec.format)
    .join(', ')

  query.credentials.forEach((credential, c) => {
    const at = `credentials.${c}`
    if (credentialIds.has(credential.id)) add(`${at}.id`, `credential id '${credential.id}' is used twice`)
    credentialIds.add(credential.id)
    const format = formatSpec(credential.format)
    if (!queriedTypes(credential))
      add(`${at}.meta`, `${format.format} queries need meta.${format.metaMember}`)

    const claimIds = new Set<string>()
    const paths = new Set<string>()
    credential.claims?.forEach((claim, k) => {
      const claimAt = `${at}.claims.${k}`
      for (const issue of format.dcqlClaimIssues(claim)) add(`${claimAt}.${issue.path}`, issue.message)
      if (!format.intentToRetain && claim.intent_to_retain !== undefined)
        add(`${claimAt}.intent_to_retain`, `applies to ${retaining} only`)
      const key = JSON.stringify(claim.path)
      if (paths.has(key)) add(`${claimAt}.path`, 'the same claim path is requested twice')
      paths.add(key)
      if (claim.id !== undefined) {
        if (claimIds.has(claim.id)) add(`${claimAt}.id`, `claim id '${claim.id}' is used twice`)
        claimIds.add(claim.id)
      } else if (credential.claim_sets) {
        add(`${claimAt}.id`, 'every claim needs an id when claim_sets is used')
      }
    })
    // OpenID4VP 1.0 §6.1.1: this verifier checks `aki`, `etsi_tl` and `openid_federation`; a query
    // it cannot check (any other type) is refused rather than sent to wallets and then ignored.
    credential.trusted_authorities?.forEach((authority, t) => {
      const authorityAt = `${at}.trusted_authorities.${t}`
      if (authority.type === 'aki')
        authority.values.forEach((value, v) => {
          if (!/^[A-Za-z0-9_-]+$/.test(value))
            add(`${authorityAt}.values.${v}`, 'a key identifier, base64url without padding')
        })
      else if (authority.type === 'etsi_tl')
        authority.values.forEach((value, v) => {
          if (!URL.canParse(value))
            add(`${authorityAt}.values.${v}`, 'the URL of an ETSI trusted list (OpenID4VP 1.0 §6.1.1.2)')
        })
      else if (authority.type === 'openid_federation') {
        authority.values.forEach((value, v) => {
          if (!URL.canParse(value))
            add(
              `${authorityAt}.values.${v}`,
              'the entity identifier (a URL) of a federation entity (OpenID4VP 1.0 §6.1.1)',
            )
        })
        // An SD-JWT VC and a VC-JWT name their issuer as an entity (iss); an mdoc comes with certificates.
        if (!(FEDERATED_ISSUER_FORMATS as readonly string[]).includes(credential.format))
          add(
            `${authorityAt}.type`,
            `openid_federation is checked for ${FEDERATED_ISSUER_FORMATS.join(' and ')} credentials only, not ${credential.format}`,
          )
      } else
        add(
          `${authorityAt}.type`,
          `'${authority.type}' cannot be checked by this verifier; only 'aki', 'etsi_tl' and 'openid_federation' (OpenID4VP 1.0 §6.1.1)`,
        )
    })
    if (credential.claim_sets && !credential.claims) add(`${at}.claim_sets`, 'claim_sets needs claims')
    for (const [s, set] of (credential.claim_sets ?? []).entries()) {
      for (const [i, id] of set.entries()) {
        if (!claimIds.has(id)) add(`${at}.claim_sets.${s}.${i}`, `no claim with id '${id}'`)
      }
    }
  })

  for (const [s, set] of (query.credential_sets ?? []).entries()) {
    for (const [o, option] of set.options.entries()) {
      for (const [i, id] of option.entries()) {
        if (!credentialIds.has(id))
          add(`credential_sets.${s}.options.${o}.${i}`, `no credential query with id '${id}'`)
      }
    }
  }
  return issues
}
