import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from 'jose'

/**
 * What a wallet does with an OpenID Federation 1.0 trust chain, written from the text for the
 * tests and on jose alone: it shares no code with the service (packages/crypto/src/federation), so
 * the service's chains are checked by a second reading of the specification.
 */

type Statement = JWTPayload & {
  jwks?: JSONWebKeySet
  authority_hints?: string[]
  metadata?: Record<string, Record<string, unknown>>
  metadata_policy?: Record<string, Record<string, Record<string, unknown>>>
}

const WELL_KNOWN = '/.well-known/openid-federation'
const get = async (url: string) => {
  const answer = await fetch(url)
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`)
  if (answer.headers.get('content-type') !== 'application/entity-statement+jwt')
    throw new Error(`${url}: content type ${answer.headers.get('content-type')}`)
  return answer.text()
}

/**
 * §10 (bottom-up, one authority hint per entity, as the test federation has): the subject's
 * entity configuration, then for each superior the subordinate statement from its fetch endpoint
 * (§8.1, `?sub=`), up to the anchor, whose configuration ends the chain.
 */
export async function collectChain(subject: string, anchor: string): Promise<string[]> {
  const chain = [await get(`${subject}${WELL_KNOWN}`)]
  let current = subject
  let hints = (decodeJwt(chain[0] as string) as Statement).authority_hints ?? []
  for (let depth = 0; depth < 5; depth++) {
    const superior = hints[0]
    if (!superior) throw new Error(`${current} names no authority hint`)
    const configuration = await get(`${superior}${WELL_KNOWN}`)
    const claims = decodeJwt(configuration) as Statement
    const endpoint = claims.metadata?.federation_entity?.federation_fetch_endpoint as string | undefined
    if (!endpoint) throw new Error(`${superior} has no federation_fetch_endpoint`)
    chain.push(await get(`${endpoint}?sub=${encodeURIComponent(current)}`))
    if (superior === anchor) return [...chain, configuration]
    current = superior
    hints = claims.authority_hints ?? []
  }
  throw new Error('no path to the anchor within 5 superiors')
}

/**
 * §10.2 Validating a Trust Chain, for ES[0] (the subject's configuration) ... ES[i] (the
 * anchor's configuration), against the anchor's keys the wallet holds out of band.
 */
export async function validateChain(
  chain: string[],
  anchor: { entityId: string; jwks: JSONWebKeySet },
  now: Date,
): Promise<Statement[]> {
  const statements = chain.map((jwt) => decodeJwt(jwt) as Statement)
  const seconds = Math.floor(now.getTime() / 1000)
  const verify = async (jwt: string, jwks: JSONWebKeySet | undefined, what: string) => {
    const header = decodeProtectedHeader(jwt)
    // §3.2: "Entity Statements MUST be explicitly typed" (entity-statement+jwt), kid REQUIRED.
    if (header.typ !== 'entity-statement+jwt' || !header.kid) throw new Error(`${what}: typ or kid`)
    if (!jwks?.keys.some((key) => key.kid === header.kid)) throw new Error(`${what}: kid not listed`)
    await jwtVerify(jwt, createLocalJWKSet(jwks), {
      currentDate: now,
      algorithms: ['ES256', 'ES384', 'EdDSA'],
    })
  }
  for (const [j, es] of statements.entries()) {
    // "Verify that iat has a value in the past. Verify that exp has a value that is in the future."
    if (!es.iss || !es.sub || !es.jwks) throw new Error(`ES[${j}]: iss, sub or jwks missing`)
    if ((es.iat ?? Infinity) > seconds + 60 || (es.exp ?? 0) <= seconds) throw new Error(`ES[${j}]: iat/exp`)
  }
  const first = statements[0] as Statement
  // "For ES[0] (the Entity Configuration), verify that iss and sub are identical" and its signature with its own jwks.
  if (first.iss !== first.sub) throw new Error('ES[0] is not an entity configuration')
  await verify(chain[0] as string, first.jwks, 'ES[0]')
  for (let j = 0; j < statements.length - 1; j++) {
    // "verify that ES[j]["iss"] == ES[j+1]["sub"]" and ES[j]'s signature with a key of ES[j+1]["jwks"].
    const next = statements[j + 1] as Statement
    if (statements[j]?.iss !== next.sub) throw new Error(`ES[${j}].iss is not ES[${j + 1}].sub`)
    // For j = 0 this ties the self-signed configuration to the keys its superior lists for it.
    await verify(chain[j] as string, next.jwks, `ES[${j}]`)
  }
  const last = statements.length - 1
  const top = statements[last] as Statement
  // "For ES[i] (the Trust Anchor's Entity Configuration), verify that the issuer matches the Entity
  // Identifier of the Trust Anchor" and its signature with the anchor's keys known out of band.
  if (top.iss !== anchor.entityId || top.sub !== anchor.entityId) throw new Error('ES[i] is not the anchor')
  await verify(chain[last] as string, anchor.jwks, `ES[${last}]`)
  return statements
}

type Policy = Record<string, unknown>

/**
 * §6.1.4.1 merging, for the operators the tests use: `value` and `default` must agree, `add`
 * unites, `subset_of` intersects, `essential` stays true once a superior made it true.
 */
function mergeParameter(superior: Policy, subordinate: Policy): Policy {
  const merged: Policy = { ...superior }
  for (const [operator, value] of Object.entries(subordinate)) {
    const known = merged[operator]
    if (known === undefined) merged[operator] = value
    else if (operator === 'value' || operator === 'default') {
      if (JSON.stringify(known) !== JSON.stringify(value)) throw new Error(`policy conflict on ${operator}`)
    } else if (operator === 'add')
      merged.add = [...new Set([...(known as unknown[]), ...(value as unknown[])])]
    else if (operator === 'subset_of')
      merged.subset_of = (known as unknown[]).filter((item) => (value as unknown[]).includes(item))
    else if (operator === 'essential') merged.essential = known === true || value === true
    else throw new Error(`operator ${operator} is not one this check knows`)
  }
  return merged
}

/** Merges the chain's policies from the anchor down (§6.1.4.1); statements are ES[1..i-1]. */
export function mergePolicies(
  subordinateStatements: Statement[],
  entityType: string,
): Record<string, Policy> {
  const merged: Record<string, Policy> = {}
  for (const statement of [...subordinateStatements].reverse()) {
    for (const [parameter, policy] of Object.entries(statement.metadata_policy?.[entityType] ?? {}))
      merged[parameter] = merged[parameter] ? mergeParameter(merged[parameter], policy) : policy
  }
  return merged
}

/**
 * §6.1.4.2 applying, in the order `value`, `add`, `default`, `subset_of`, `essential`: `value`
 * sets (null removes), `add` adds values, `default` fills an absent parameter, `subset_of` keeps the
 * allowed values, and an `essential` parameter that is still absent fails the chain.
 */
export function applyPolicy(
  metadata: Record<string, unknown>,
  policy: Record<string, Policy>,
): Record<string, unknown> {
  const result = { ...metadata }
  for (const [parameter, operators] of Object.entries(policy)) {
    if ('value' in operators) {
      if (operators.value === null) delete result[parameter]
      else result[parameter] = operators.value
    }
    if (Array.isArray(operators.add))
      result[parameter] = [...new Set([...((result[parameter] as unknown[]) ?? []), ...operators.add])]
    if ('default' in operators && result[parameter] === undefined) result[parameter] = operators.default
    if (Array.isArray(operators.subset_of) && Array.isArray(result[parameter]))
      result[parameter] = (result[parameter] as unknown[]).filter((item) =>
        (operators.subset_of as unknown[]).includes(item),
      )
    if (operators.essential === true && result[parameter] === undefined)
      throw new Error(`essential parameter ${parameter} is absent`)
  }
  return result
}

/** The subject's metadata of one entity type as the chain resolves it (§6.1). */
export function resolvedMetadata(statements: Statement[], entityType: string): Record<string, unknown> {
  const own = statements[0]?.metadata?.[entityType]
  if (!own) throw new Error(`the subject has no ${entityType} metadata`)
  // The subordinate statements are ES[1] ... ES[i-1]; ES[i] is the anchor's configuration.
  return applyPolicy(own, mergePolicies(statements.slice(1, -1), entityType))
}
