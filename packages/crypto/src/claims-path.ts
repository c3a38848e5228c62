/** A claims path pointer (OpenID4VP §7): a string selects an object member, null every array element, an integer one. */
export type ClaimsPath = readonly (string | number | null)[]

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The claims a claims path pointer selects (OpenID4VP §7.1), the one walker of claim paths: issuance
 * (which disclosable claims a credential carries) and the DCQL claims check of the verifier. From
 * the root, each component selects in every selected element: a string the member of that name (own
 * members only, never `constructor` or `__proto__`), null all elements of an array, a non-negative
 * integer the element at that index. Undefined where processing aborts: a string over anything but
 * an object, null or an index over anything but an array, or nothing selected at the end.
 */
export function selectClaims(root: unknown, path: ClaimsPath): unknown[] | undefined {
  let selected: unknown[] = [root]
  for (const component of path) {
    const next: unknown[] = []
    for (const element of selected) {
      if (typeof component === 'string') {
        if (!isObject(element)) return undefined
        if (Object.hasOwn(element, component)) next.push(element[component])
        continue
      }
      if (!Array.isArray(element)) return undefined
      if (component === null) for (const item of element) next.push(item)
      else if (!Number.isSafeInteger(component) || component < 0) return undefined
      else if (component < element.length) next.push(element[component])
    }
    selected = next
  }
  return selected.length > 0 ? selected : undefined
}
