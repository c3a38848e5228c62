// W3C Verifiable Credentials secured as JWTs (jwt_vc_json: VCDM 2.0 with VC-JOSE-COSE, VCDM 1.1
// JWTs accepted): issuance, credential and presentation verification.
export type { BitstringEntry, SignBitstringStatusListOptions } from './bitstring-status-list'
export {
  bitstringEntriesOf,
  bitstringStatusEntries,
  decodeBitstring,
  encodeBitstring,
  MIN_BITSTRING_ENTRIES,
  signBitstringStatusList,
} from './bitstring-status-list'
export type { VerifiedVc } from './credential'
export { didJwkKey, VCDM1_CONTEXT, verifyVcJwt } from './credential'
export type { IssueVcJwtOptions } from './issue'
export { issueVcJwt } from './issue'
export type { VcPresentationCheck } from './presentation'
export { verifyVcPresentation } from './presentation'
