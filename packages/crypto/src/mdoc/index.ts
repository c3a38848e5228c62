// ISO 18013-5 mdoc, the whole format: issuance (IssuerSigned), DeviceResponse verification with
// the OpenID4VP or ISO/IEC 18013-7 Annex C session transcript, Annex C requests and encrypted
// responses, and the MSO's status list entry.
export type { AnnexCRequest, AnnexCRequestOptions, OpenAnnexCResponseOptions } from './annex-c'
export { annexCRequest, annexCSessionTranscript, openAnnexCResponse } from './annex-c'
export type { VerificationContext } from './context'
export { createMdocContext } from './context'
export type { IssueMdocOptions } from './issue'
export { issueMdoc, jwkToCoseKey } from './issue'
export { msoStatusEntry } from './status'
export type { MdocCheck, MdocTranscript } from './verify'
export { verifyMdocPresentation } from './verify'
