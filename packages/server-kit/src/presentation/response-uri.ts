/**
 * The verifier's response endpoint of one request (OpenID4VP 1.0 §8.2 `response_uri`), built here
 * only: the request object sends it, the `redirect_uri` client identifier is made of it, and an
 * mdoc's session transcript (§B.2.6.1) hashes it, so every copy must match byte for byte.
 */
export const verifierResponseUri = (publicUrl: string, tenantId: string, requestId: string) =>
  `${publicUrl}/verifiers/${tenantId}/responses/${requestId}`
