import { createHash } from 'node:crypto'

/**
 * W3C Subresource Integrity metadata of some bytes (`sha256-<base64>`), the form SD-JWT VC uses
 * for `vct#integrity`, `extends#integrity` and `schema_uri#integrity`.
 */
export function subresourceIntegrity(data: Uint8Array): string {
  return `sha256-${createHash('sha256').update(data).digest('base64')}`
}
