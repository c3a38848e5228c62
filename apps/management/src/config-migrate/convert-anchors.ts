import {
  ANCHORS_TRUST_LIST_DESCRIPTION,
  anchorsTrustListCertificates,
  anchorsTrustListId,
} from '@credential-service/db-schema'

type Json = Record<string, unknown>

export interface AnchorsConversion {
  body: Json
  /** The `trust-lists/<id>.json` the anchors became; absent when the body had none. */
  list?: { id: string; body: Json }
}

/**
 * Issue 25: a presentation configuration or wallet provider file's deprecated `trustAnchors`
 * become the pem list `anchors-<hash>` (the id the API and migration 0026 give the same set),
 * named in `trustListIds`. A body without them is returned as it is, so a second run changes nothing.
 */
export function convertAnchors(body: Json): AnchorsConversion {
  if (!('trustAnchors' in body)) return { body }
  const { trustAnchors, ...rest } = body
  const certificates = anchorsTrustListCertificates(
    Array.isArray(trustAnchors) ? trustAnchors.map(String) : [],
  )
  if (!certificates.length) return { body: rest }
  const id = anchorsTrustListId(certificates)
  const named = Array.isArray(body.trustListIds) ? body.trustListIds.map(String) : []
  return {
    body: { ...rest, trustListIds: [...new Set([...named, id])] },
    list: {
      id,
      body: { id, description: ANCHORS_TRUST_LIST_DESCRIPTION, source: { type: 'pem', certificates } },
    },
  }
}
