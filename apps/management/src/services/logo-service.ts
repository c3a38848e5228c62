import { createHash } from 'node:crypto'
import { InvalidInputError, type Logo, type LogoUpload, NotFoundError } from '@credential-service/core-domain'
import {
  createTenantLogoRepository,
  createTenantRepository,
  type Database,
} from '@credential-service/db-schema'

/** Whether the bytes are what the declared type says (its signature), so no HTML passes as a PNG. */
function looksLike(contentType: LogoUpload['contentType'], bytes: Buffer): boolean {
  switch (contentType) {
    case 'image/png':
      return bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    case 'image/jpeg':
      return bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))
    case 'image/webp':
      return (
        bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
        bytes.subarray(8, 12).toString('latin1') === 'WEBP'
      )
    case 'image/svg+xml':
      return /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/.test(
        bytes.subarray(0, 4096).toString('utf8'),
      )
  }
}

/**
 * Issue 42 item 5: logos a tenant uploads for its issuer display, stored by SHA-256 and served
 * by the issuer at `{issuer}/logos/{sha256}` (apps/issuer/src/routes/logos.ts).
 */
export function createLogoService(deps: { db: Database; publicUrl: string }) {
  return {
    async upload(tenantId: string, input: LogoUpload): Promise<Logo> {
      if (!(await createTenantRepository(deps.db).get(tenantId))) throw new NotFoundError('tenant', tenantId)
      const bytes = Buffer.from(input.data, 'base64')
      if (bytes.length === 0 || !looksLike(input.contentType, bytes)) {
        const message = `the data is not a ${input.contentType} image`
        throw new InvalidInputError(message, [{ path: 'body.data', message }])
      }
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      await createTenantLogoRepository(deps.db, tenantId).put(sha256, input.contentType, bytes)
      return {
        uri: `${deps.publicUrl}/issuers/${tenantId}/logos/${sha256}`,
        sha256,
        contentType: input.contentType,
        size: bytes.length,
      }
    },
  }
}
