// Loaded with the first SD-JWT issued or verified: the management app imports this package but
// never issues, and an idle verifier does not hold the libraries.
let libraries:
  | Promise<[typeof import('@sd-jwt/crypto-nodejs'), typeof import('@sd-jwt/sd-jwt-vc')]>
  | undefined
export const loadSdJwtLibraries = () =>
  (libraries ??= Promise.all([import('@sd-jwt/crypto-nodejs'), import('@sd-jwt/sd-jwt-vc')]))
