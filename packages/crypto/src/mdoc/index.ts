// ISO 18013-5 mdoc, the whole format: issuance (IssuerSigned), DeviceResponse verification with
// the OpenID4VP session transcript, and the MSO's status list entry.
export type { VerificationContext } from './context'
export { createMdocContext } from './context'
export type { IssueMdocOptions } from './issue'
export { issueMdoc, jwkToCoseKey } from './issue'
export { msoStatusEntry } from './status'
export type { MdocCheck, MdocTranscript } from './verify'
export { verifyMdocPresentation } from './verify'
