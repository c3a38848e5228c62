/**
 * JWS algorithms with a public key (RFC 8725 §3.1): a token or statement checked against a
 * published key set is never `none` or HMAC, whose key its verifiers would share.
 */
export const ASYMMETRIC_JWS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]
