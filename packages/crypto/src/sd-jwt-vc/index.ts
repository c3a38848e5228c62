// SD-JWT VC (draft-ietf-oauth-sd-jwt-vc, RFC 9901), the whole format: issuance, presentation
// verification with its disclosure checks, and the credential's status list entry.
export { checkDisclosures } from './disclosures'
export type { IssueSdJwtVcOptions } from './issue'
export { disclosureFrame, issueSdJwtVc } from './issue'
export { statusListEntryOf } from './status'
export type { SdJwtCheck } from './verify'
export { verifySdJwtPresentation } from './verify'
