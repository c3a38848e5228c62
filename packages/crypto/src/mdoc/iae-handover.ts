import { createHash } from 'node:crypto'
import { IA_MDOC_HANDOVER } from '@credential-service/core-domain'
import type { SessionTranscript } from '@owf/mdoc'
import { base64url, calculateJwkThumbprint, type JWK } from 'jose'
import { namedHandoverTranscript } from './dcapi-handover'

type Mdoc = typeof import('@owf/mdoc')

/**
 * OpenID4VCI 1.1 (working copy 2d9fd4a) §"Interactive Authorization Binding" of mso_mdoc: the
 * SessionTranscript [null, null, ["OpenID4VCIIAEHandover", SHA-256(CBOR(OpenID4VCIIAEHandoverInfo))]]
 * with OpenID4VCIIAEHandoverInfo = [endpoint (no `ia:` prefix), nonce, JWK SHA-256 thumbprint of the
 * response encryption key as bytes for `ia_post.jwt`, else null].
 */
export async function iaeSessionTranscript(
  mdoc: Mdoc,
  binding: { endpoint: string; nonce: string; encryptionJwk: JWK | undefined },
): Promise<SessionTranscript> {
  const thumbprint = binding.encryptionJwk
    ? base64url.decode(await calculateJwkThumbprint(binding.encryptionJwk))
    : null
  const hash = createHash('sha256')
    .update(mdoc.cborEncode([binding.endpoint, binding.nonce, thumbprint]))
    .digest()
  return namedHandoverTranscript(mdoc, IA_MDOC_HANDOVER, new Uint8Array(hash))
}
