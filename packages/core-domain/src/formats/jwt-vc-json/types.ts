/**
 * The credential type of a jwt_vc_json configuration or query alternative as one string: its VC
 * `type` values, sorted and space-separated (a type is an IRI or a term, neither has spaces). A
 * configuration's type then equals a `type_values` alternative that asks for exactly its types.
 * Matching a presented credential is a subset test (vcTypesMatch), not this string.
 */
export const vcTypeKey = (types: readonly string[]): string => [...new Set(types)].sort().join(' ')

/** The VC `type` values of a type key. */
export const vcTypesOfKey = (key: string): string[] => key.split(' ').filter(Boolean)

/**
 * OpenID4VP 1.0 B.1.1 `type_values`: "Each inner array specifies a set of fully expanded types that
 * MUST be present in the fully expanded types in the `type` property of the Verifiable Credential,
 * regardless of order or the presence of additional types". No JSON-LD expansion (jwt_vc_json):
 * the types are compared as written, which B.1.1 allows for types no `@context` defines.
 */
export function vcTypesMatch(
  typeValues: readonly (readonly string[])[],
  presented: readonly string[],
): boolean {
  return typeValues.some((alternative) => alternative.every((type) => presented.includes(type)))
}
