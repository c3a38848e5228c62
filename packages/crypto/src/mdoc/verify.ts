import type { DeviceResponse } from '@owf/mdoc'
import { base64url, calculateJwkThumbprint, type JWK } from 'jose'
import { checkCbor } from '../cbor-guard'
import { PresentationRejected, type PresentationTrust } from '../presentation'
import type { StatusListEntry } from '../status-list-token'
import { loadMdoc } from './context'
import { msoStatusEntry } from './status'

export interface MdocCheck extends PresentationTrust {
  presentation: string
  docType: string
  clientId: string
  nonce: string
  responseUri: string
  /** The request's encryption key when the response was encrypted (its thumbprint enters the transcript). */
  encryptionJwk: JWK | undefined
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

/**
 * The DeviceResponse bytes of an mdoc presentation (OpenID4VP Appendix B.2: base64url without padding),
 * refused before decoding when the CBOR guard finds what no mdoc needs (S-128): cbor-x decodes a
 * bignum in quadratic time, and decoding happens before any signature is checked.
 */
function deviceResponseBytes(presentation: string): Uint8Array {
  if (!BASE64URL.test(presentation)) throw new PresentationRejected('the presentation is not base64url')
  const bytes = Buffer.from(presentation, 'base64url')
  const checked = checkCbor(bytes)
  if (!checked.ok)
    throw new PresentationRejected(`the mdoc presentation is refused before decoding: ${checked.reason}`)
  return bytes
}

/**
 * Verifies an mdoc `DeviceResponse` (OpenID4VP Appendix B.2, checklist V-29, V-30) with @owf/mdoc:
 * issuer signature and `x5chain` to a trust anchor, value digests, validity, and the device
 * signature over the OpenID4VP SessionTranscript built from this request's client id, nonce,
 * response URI and encryption key thumbprint; the MSO's status list entry, when it has one, must be
 * VALID (checklist V-33). Returns the elements per namespace.
 */
export async function verifyMdocPresentation(check: MdocCheck): Promise<Record<string, unknown>> {
  const bytes = deviceResponseBytes(check.presentation)
  const {
    mdoc: { DeviceResponse, SessionTranscript, Verifier },
    context: mdocContext,
  } = await loadMdoc()
  let response: DeviceResponse
  try {
    response = DeviceResponse.decode(bytes)
  } catch {
    throw new PresentationRejected('the presentation is not an mdoc DeviceResponse')
  }
  const sessionTranscript = await SessionTranscript.forOid4Vp(
    {
      clientId: check.clientId,
      nonce: check.nonce,
      responseUri: check.responseUri,
      ...(check.encryptionJwk
        ? { jwkThumbprint: base64url.decode(await calculateJwkThumbprint(check.encryptionJwk)) }
        : {}),
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
  let entry: StatusListEntry | undefined
  try {
    entry = await msoStatusEntry(document.issuerSigned.issuerAuth.payload ?? new Uint8Array())
  } catch {
    throw new PresentationRejected('the MSO status is not a status_list {idx, uri}')
  }
  if (entry) await check.requireValidStatus(entry)
  const claims: Record<string, unknown> = {}
  for (const namespace of document.issuerSigned.issuerNamespaces.issuerNamespaces.keys()) {
    claims[namespace] = document.issuerSigned.getPrettyClaims(namespace)
  }
  return claims
}
