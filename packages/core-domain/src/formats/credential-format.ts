/**
 * The credential formats this service issues and verifies, by their OpenID4VCI / OpenID4VP
 * identifiers. A new one is added here, then the compiler names every registry that lacks it
 * (config-schemas.ts and registry.ts here, the runtimes in packages/crypto).
 */
export const CREDENTIAL_FORMATS = ['dc+sd-jwt', 'mso_mdoc', 'jwt_vc_json'] as const
export type CredentialFormat = (typeof CREDENTIAL_FORMATS)[number]
