/**
 * OpenID Federation 1.0 §6.1 metadata policies: the standard operators (§6.1.3.1), their allowed
 * combinations, the merge of a chain's policies from the most superior statement down (§6.1.4.1)
 * and their application to the subject's metadata (§6.1.4.2). Any policy error makes the trust
 * chain invalid, so every failure throws.
 */

/** Entity type → metadata parameter → operator → operator value. */
export type MetadataPolicy = Record<string, Record<string, Record<string, unknown>>>
/** Entity type → metadata parameter → value. */
export type EntityMetadata = Record<string, Record<string, unknown>>

export class MetadataPolicyError extends Error {
  override name = 'MetadataPolicyError'
}

// §6.1.3.1: the order of application, value first and essential last.
const OPERATORS = ['value', 'add', 'default', 'one_of', 'subset_of', 'superset_of', 'essential'] as const
type Operator = (typeof OPERATORS)[number]
const STANDARD = new Set<string>(OPERATORS)

const key = (value: unknown) => JSON.stringify(value)
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const contains = (values: unknown[], item: unknown) => values.some((value) => key(value) === key(item))
const subset = (inner: unknown[], outer: unknown[]) => inner.every((item) => contains(outer, item))
const union = (a: unknown[], b: unknown[]) => [...a, ...b.filter((item) => !contains(a, item))]
const intersection = (a: unknown[], b: unknown[]) => a.filter((item) => contains(b, item))

function fail(where: string, message: string): never {
  throw new MetadataPolicyError(`metadata policy of ${where}: ${message}`)
}

function arrayOperand(where: string, operator: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) fail(where, `${operator} must be an array`)
  return value
}

/**
 * Checks one metadata parameter policy: operand types and the combinations each operator allows
 * (§6.1.3.1.1 to §6.1.3.1.7). Additional operators named critical are not understood: a policy
 * error (§6.1.3.2); other additional operators are dropped.
 */
function checkedParameterPolicy(
  where: string,
  policy: unknown,
  critical: ReadonlySet<string>,
): Record<string, unknown> {
  if (!isObject(policy)) fail(where, 'a parameter policy must be a JSON object')
  const result: Record<string, unknown> = {}
  for (const [operator, value] of Object.entries(policy)) {
    if (STANDARD.has(operator)) result[operator] = value
    else if (critical.has(operator)) fail(where, `the critical operator ${operator} is not understood`)
  }
  const has = (operator: Operator) => operator in result
  const { value, add, one_of: oneOf, subset_of: subsetOf, superset_of: supersetOf, essential } = result
  if (has('value') && !['string', 'number', 'boolean', 'object'].includes(typeof value))
    fail(where, 'value must be a string, number, boolean, array or null')
  if (has('value') && isObject(value)) fail(where, 'value must be a string, number, boolean, array or null')
  if (has('add')) arrayOperand(where, 'add', add)
  if (has('default') && (result.default === null || isObject(result.default)))
    fail(where, 'default must be a string, number, boolean or array')
  if (has('one_of')) arrayOperand(where, 'one_of', oneOf)
  if (has('subset_of')) arrayOperand(where, 'subset_of', subsetOf)
  if (has('superset_of')) arrayOperand(where, 'superset_of', supersetOf)
  if (has('essential') && typeof essential !== 'boolean') fail(where, 'essential must be a boolean')

  if (has('value')) {
    if (has('add') && !(Array.isArray(value) && subset(add as unknown[], value)))
      fail(where, 'the values of add must be a subset of value')
    if (has('default') && value === null) fail(where, 'default cannot be combined with a null value')
    if (has('one_of') && !contains(oneOf as unknown[], value)) fail(where, 'value must be among one_of')
    if (has('subset_of') && !(Array.isArray(value) && subset(value, subsetOf as unknown[])))
      fail(where, 'value must be a subset of subset_of')
    if (has('superset_of') && !(Array.isArray(value) && subset(supersetOf as unknown[], value)))
      fail(where, 'value must be a superset of superset_of')
    if (value === null && essential === true) fail(where, 'a null value cannot be essential')
  }
  // one_of combines only with value, default and essential (§6.1.3.1.4).
  if (has('one_of') && (has('add') || has('subset_of') || has('superset_of')))
    fail(where, 'one_of cannot be combined with add, subset_of or superset_of')
  if (has('add') && has('subset_of') && !subset(add as unknown[], subsetOf as unknown[]))
    fail(where, 'the values of add must be a subset of subset_of')
  if (has('subset_of') && has('superset_of') && !subset(supersetOf as unknown[], subsetOf as unknown[]))
    fail(where, 'subset_of must be a superset of superset_of')
  return result
}

/** §6.1.3.1: the operator value merge of a superior's and a subordinate's value. */
function mergeOperator(where: string, operator: string, superior: unknown, subordinate: unknown): unknown {
  switch (operator) {
    case 'value':
    case 'default':
      if (key(superior) !== key(subordinate)) fail(where, `two different ${operator} values cannot be merged`)
      return superior
    case 'add':
    case 'superset_of':
      return union(superior as unknown[], subordinate as unknown[])
    case 'subset_of':
      return intersection(superior as unknown[], subordinate as unknown[])
    case 'one_of': {
      const merged = intersection(superior as unknown[], subordinate as unknown[])
      if (merged.length === 0) fail(where, 'the merged one_of values are empty')
      return merged
    }
    default:
      return (superior as boolean) || (subordinate as boolean)
  }
}

function checkedPolicy(policy: unknown, critical: ReadonlySet<string>): MetadataPolicy {
  if (!isObject(policy)) throw new MetadataPolicyError('metadata_policy must be a JSON object')
  const result: MetadataPolicy = {}
  for (const [entityType, parameters] of Object.entries(policy)) {
    if (!isObject(parameters))
      throw new MetadataPolicyError(`metadata_policy.${entityType} must be an object`)
    result[entityType] = {}
    for (const [parameter, operators] of Object.entries(parameters))
      (result[entityType] as Record<string, Record<string, unknown>>)[parameter] = checkedParameterPolicy(
        `${entityType}.${parameter}`,
        operators,
        critical,
      )
  }
  return result
}

/**
 * §6.1.4.1 resolution: the `metadata_policy` claims of a chain's subordinate statements, the most
 * superior first, each checked and merged into the policy of those above it. `critical` holds
 * every `metadata_policy_crit` name found in the chain.
 */
export function resolveMetadataPolicy(policies: unknown[], critical: Iterable<string> = []): MetadataPolicy {
  const crit = new Set(critical)
  let current: MetadataPolicy = {}
  for (const next of policies) {
    const policy = checkedPolicy(next, crit)
    const merged: MetadataPolicy = structuredClone(current)
    for (const [entityType, parameters] of Object.entries(policy)) {
      const target = merged[entityType] ?? {}
      merged[entityType] = target
      for (const [parameter, operators] of Object.entries(parameters)) {
        const where = `${entityType}.${parameter}`
        const into = { ...(target[parameter] ?? {}) }
        for (const [operator, value] of Object.entries(operators))
          into[operator] = operator in into ? mergeOperator(where, operator, into[operator], value) : value
        target[parameter] = checkedParameterPolicy(where, into, crit)
      }
    }
    current = merged
  }
  return current
}

/** §6.1.4.2: one parameter's value after the operators, in their order; undefined: absent. */
function applyOperators(where: string, input: unknown, operators: Record<string, unknown>): unknown {
  // §6.1.3.1.8: scope is a space-separated string handled as an array of scope values.
  const isScope = where.endsWith('.scope') && typeof input === 'string'
  let current: unknown = isScope ? (input as string).split(' ').filter(Boolean) : input
  const present = () => current !== undefined
  const asArray = (operator: string): unknown[] => {
    if (!Array.isArray(current)) fail(where, `${operator} applies to an array parameter`)
    return current
  }
  if ('value' in operators) current = operators.value === null ? undefined : structuredClone(operators.value)
  if ('add' in operators)
    current = present() ? union(asArray('add'), operators.add as unknown[]) : structuredClone(operators.add)
  if ('default' in operators && !present()) current = structuredClone(operators.default)
  if ('one_of' in operators && present() && !contains(operators.one_of as unknown[], current))
    fail(where, `the value ${key(current)} is not one of ${key(operators.one_of)}`)
  if ('subset_of' in operators && present())
    current = intersection(asArray('subset_of'), operators.subset_of as unknown[])
  if (
    'superset_of' in operators &&
    present() &&
    !subset(operators.superset_of as unknown[], asArray('superset_of'))
  )
    fail(where, `the value ${key(current)} does not contain ${key(operators.superset_of)}`)
  if (operators.essential === true && !present()) fail(where, 'an essential parameter is absent')
  return isScope && Array.isArray(current) ? current.join(' ') : current
}

/**
 * §6.1.4.2 application: the resolved policy applied to the subject's metadata, for every entity
 * type the metadata has. Returns new metadata; throws MetadataPolicyError when it does not comply.
 */
export function applyMetadataPolicy(metadata: EntityMetadata, policy: MetadataPolicy): EntityMetadata {
  const result: EntityMetadata = structuredClone(metadata)
  for (const [entityType, parameters] of Object.entries(policy)) {
    const target = result[entityType]
    if (!target) continue
    for (const [parameter, operators] of Object.entries(parameters)) {
      const value = applyOperators(`${entityType}.${parameter}`, target[parameter], operators)
      if (value === undefined) delete target[parameter]
      else target[parameter] = value
    }
  }
  return result
}
