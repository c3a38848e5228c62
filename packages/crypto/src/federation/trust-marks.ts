import type { JSONWebKeySet } from 'jose'
import {
  decodeEntityStatement,
  type EntityStatement,
  FederationTrustError,
  verifyFederationJwt,
} from './entity-statement'

/** A trust anchor as a deployment configures it: its entity identifier and its federation keys. */
export interface FederationAnchor {
  entityId: string
  jwks: JSONWebKeySet
}

/** The federation keys of a trust mark issuer other than the anchor (resolved through its own chain). */
export type TrustMarkIssuerKeys = (issuer: string) => Promise<JSONWebKeySet>

export interface CheckTrustMarksOptions {
  /** The chain subject's entity configuration, whose `trust_marks` are checked. */
  subject: EntityStatement
  anchor: FederationAnchor
  /** The anchor's entity configuration: its `trust_mark_issuers` and `trust_mark_owners`. */
  anchorConfiguration: EntityStatement | undefined
  required: string[]
  now: Date
  issuerKeys?: TrustMarkIssuerKeys | undefined
}

/** §7.3: one trust mark of the subject's configuration, for its type; the refusal, or its `exp` (null: none). */
async function trustMarkRefusal(
  jwt: string,
  type: string,
  options: CheckTrustMarksOptions,
): Promise<string | { exp: number | null }> {
  try {
    const claims = decodeEntityStatement(jwt, 'trust mark')
    if (claims.trust_mark_type !== type) return `the trust mark of type ${type} names another type`
    const issuers = options.anchorConfiguration?.trust_mark_issuers?.[type]
    // §3.1.2 trust_mark_issuers: the anchor names who may issue each type; an empty array, anyone.
    if (!issuers) return `the trust anchor does not recognise trust marks of type ${type}`
    if (issuers.length > 0 && !issuers.includes(claims.iss))
      return `${claims.iss} is not an issuer of ${type} trust marks accredited by the trust anchor`
    // §7.3: a type with an owner needs a delegation, which this service does not accept yet (fail closed).
    if (options.anchorConfiguration?.trust_mark_owners?.[type])
      return `trust marks of type ${type} need a delegation, which is not supported`
    const keys =
      claims.iss === options.anchor.entityId
        ? options.anchor.jwks
        : options.issuerKeys
          ? await options.issuerKeys(claims.iss)
          : undefined
    if (!keys) return `the keys of the trust mark issuer ${claims.iss} are not known`
    const verified = await verifyFederationJwt(jwt, {
      keys,
      now: options.now,
      typ: 'trust-mark+jwt',
      what: 'trust mark',
    })
    if (verified.sub !== options.subject.sub) return `the ${type} trust mark is about another entity`
    return { exp: typeof verified.exp === 'number' ? verified.exp : null }
  } catch (error) {
    if (error instanceof FederationTrustError) return error.message
    throw error
  }
}

/**
 * The trust mark types of `required` the subject holds (§7.3 each, issuer accredited by the
 * anchor); throws FederationTrustError naming the first type without a valid mark. Answers the
 * earliest `exp` of the marks accepted (undefined: none expires), which bounds how long the
 * chain's result may be kept.
 */
export async function checkRequiredTrustMarks(options: CheckTrustMarksOptions): Promise<number | undefined> {
  let earliest: number | undefined
  for (const type of options.required) {
    const marks = (options.subject.trust_marks ?? []).filter((entry) => entry?.trust_mark_type === type)
    if (marks.length === 0)
      throw new FederationTrustError(`the entity has no trust mark of type ${type}`, 'missing-trust-mark')
    const refusals: string[] = []
    for (const mark of marks) {
      const outcome = await trustMarkRefusal(String(mark.trust_mark), type, options)
      if (typeof outcome === 'string') {
        refusals.push(outcome)
        continue
      }
      if (outcome.exp !== null) earliest = Math.min(earliest ?? outcome.exp, outcome.exp)
      break
    }
    if (refusals.length === marks.length)
      throw new FederationTrustError(refusals.join('; '), 'missing-trust-mark')
  }
  return earliest
}
