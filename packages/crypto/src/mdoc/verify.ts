import type { DeviceResponse } from '@owf/mdoc'
import { base64url, calculateJwkThumbprint, type JWK } from 'jose'
import { checkCbor } from '../cbor-guard'
import { parseCertificate } from '../parsed-certificates'
import { PresentationRejected, type PresentationTrust, type QueryTrust } from '../presentation'
import type { StatusListEntry } from '../status-list-token'
import { trustedAuthoritiesRefusal } from '../trusted-authorities'
import { loadMdoc } from './context'
import { annexCSessionTranscriptOf } from './dcapi-handover'
import { iaeSessionTranscript } from './iae-handover'
import { msoStatusEntry } from './status'

/**
 * What the device signed over: the SessionTranscript of the channel the response came by. The
 * request's encryption key, when the response was encrypted, enters the OpenID4VP handovers by
 * its thumbprint.
 */
export type MdocTranscript =
  /** OpenID4VP 1.0 B.2.6.1: redirect flows (`OpenID4VPHandover`). */
  | { kind: 'oid4vp'; clientId: string; nonce: string; responseUri: string; encryptionJwk: JWK | undefined }
  /** OpenID4VP 1.0 B.2.6.2: over the Digital Credentials API (`OpenID4VPDCAPIHandover`). */
  | { kind: 'oid4vp-dc-api'; origin: string; nonce: string; encryptionJwk: JWK | undefined }
  /** ISO/IEC 18013-7 Annex C (`dcapi` handover): the SessionTranscript's CBOR bytes, as built for decryption. */
  | { kind: 'annex-c'; sessionTranscript: Uint8Array }
  /** OpenID4VCI 1.1 Interactive Authorization (`OpenID4VCIIAEHandover`): the challenge endpoint's URL. */
  | { kind: 'oid4vci-iae'; endpoint: string; nonce: string; encryptionJwk: JWK | undefined }

export interface MdocCheck extends PresentationTrust, QueryTrust {
  /** base64url DeviceResponse (OpenID4VP), or its bytes (Annex C, decrypted). */
  presentation: string | Uint8Array
  docType: string
  transcript: MdocTranscript
}

const thumbprint = async (jwk: JWK | undefined) =>
  jwk ? { jwkThumbprint: base64url.decode(await calculateJwkThumbprint(jwk)) } : {}

const BASE64URL = /^[A-Za-z0-9_-]+$/

/**
 * The DeviceResponse bytes of an mdoc presentation (OpenID4VP Appendix B.2: base64url without padding),
 * refused before decoding when the CBOR guard finds what no mdoc needs (S-128): cbor-x decodes a
 * bignum in quadratic time, and decoding happens before any signature is checked.
 */
function deviceResponseBytes(presentation: string | Uint8Array): Uint8Array {
  if (typeof presentation === 'string' && !BASE64URL.test(presentation))
    throw new PresentationRejected('the presentation is not base64url')
  const bytes = typeof presentation === 'string' ? Buffer.from(presentation, 'base64url') : presentation
  const checked = checkCbor(bytes)
  if (!checked.ok)
    throw new PresentationRejected(`the mdoc presentation is refused before decoding: ${checked.reason}`)
  return bytes
}

/**
 * Verifies an mdoc `DeviceResponse` (OpenID4VP Appendix B.2, checklist V-29, V-30) with @owf/mdoc:
 * issuer signature and `x5chain` to a trust anchor, value digests, validity, and the device
 * signature over the SessionTranscript of the channel (`transcript`); the MSO's status list entry, when it has one, must be
 * VALID (checklist V-33). Returns the elements per namespace.
 */
export async function verifyMdocPresentation(check: MdocCheck): Promise<Record<string, unknown>> {
  const bytes = deviceResponseBytes(check.presentation)
  const { mdoc, context: mdocContext } = await loadMdoc()
  const { DeviceResponse, SessionTranscript, Verifier } = mdoc
  let response: DeviceResponse
  try {
    response = DeviceResponse.decode(bytes)
  } catch {
    throw new PresentationRejected('the presentation is not an mdoc DeviceResponse')
  }
  const { transcript } = check
  const sessionTranscript =
    transcript.kind === 'annex-c'
      ? annexCSessionTranscriptOf(mdoc, transcript.sessionTranscript)
      : transcript.kind === 'oid4vci-iae'
        ? await iaeSessionTranscript(mdoc, transcript)
        : transcript.kind === 'oid4vp-dc-api'
          ? await SessionTranscript.forOid4VpDcApi(
              {
                origin: transcript.origin,
                nonce: transcript.nonce,
                ...(await thumbprint(transcript.encryptionJwk)),
              },
              mdocContext,
            )
          : await SessionTranscript.forOid4Vp(
              {
                clientId: transcript.clientId,
                nonce: transcript.nonce,
                responseUri: transcript.responseUri,
                ...(await thumbprint(transcript.encryptionJwk)),
              },
              mdocContext,
            )
  const failed: string[] = []
  try {
    await Verifier.verifyDeviceResponse(
      {
        deviceResponse: response,
        sessionTranscript,
        trustedCertificates: check.anchors.map((anchor) => new Uint8Array(anchor.raw)),
        disableCertificateChainValidation: check.acceptAnyIssuer,
        now: check.now,
        onCheck: (item) => {
          if (item.status === 'FAILED') failed.push(`${item.check}${item.reason ? ` (${item.reason})` : ''}`)
        },
      },
      mdocContext,
    )
  } catch (error) {
    failed.push((error as Error).message)
  }
  if (failed.length) throw new PresentationRejected(`the mdoc did not verify: ${failed[0]}`)
  const document = response.documents?.[0]
  if (!document || (response.documents?.length ?? 0) > 1)
    throw new PresentationRejected('the DeviceResponse must hold exactly one document')
  if (document.docType !== check.docType)
    throw new PresentationRejected(`docType '${document.docType}' was not requested`)
  const chain = document.issuerSigned.issuerAuth.certificateChain.map((der) =>
    parseCertificate(Buffer.from(der).toString('base64')),
  )
  const authorityProblem = await trustedAuthoritiesRefusal(chain, check.trustedAuthorities, 'x5chain', {
    byUrl: check.trustedLists ?? new Map(),
    now: check.now,
  })
  if (authorityProblem) throw new PresentationRejected(authorityProblem)
  let entry: StatusListEntry | undefined
  try {
    entry = await msoStatusEntry(document.issuerSigned.issuerAuth.payload ?? new Uint8Array())
  } catch {
    throw new PresentationRejected('the MSO status is not a status_list {idx, uri}')
  }
  if (entry) await check.requireValidStatus(entry, 'cwt')
  const claims: Record<string, unknown> = {}
  for (const namespace of document.issuerSigned.issuerNamespaces.issuerNamespaces.keys()) {
    claims[namespace] = document.issuerSigned.getPrettyClaims(namespace)
  }
  return claims
}
