import { UpstreamError } from '@credential-service/core-domain'
import { KeyProviderError, type Signer, signJws } from '@credential-service/crypto'

/**
 * A compact JWS over `payload` (the document's bytes, so an integrity value covers exactly what
 * was signed), with the key chain's `kid` and `x5c`. A key provider (Vault, AWS KMS) that does not
 * sign is their fault, not the caller's: 502 naming the chain.
 */
export async function signDocumentBytes(
  signer: Signer,
  header: { typ: string; iat?: number },
  payload: Uint8Array,
): Promise<string> {
  try {
    return await signJws(
      signer,
      { ...header, kid: signer.kid, ...(signer.x5c.length ? { x5c: signer.x5c } : {}) },
      payload,
    )
  } catch (error) {
    if (!(error instanceof KeyProviderError)) throw error
    throw new UpstreamError(error.message, { cause: error })
  }
}
