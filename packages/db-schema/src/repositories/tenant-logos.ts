import { and, eq } from 'drizzle-orm'
import type { Database } from '../database'
import { tenantLogos } from '../schema'

export interface StoredLogo {
  contentType: string
  bytes: Buffer
}

/** A tenant's uploaded logos, by SHA-256 (schema/tenant-logos.ts). */
export function createTenantLogoRepository(db: Database, tenantId: string) {
  return {
    /** Stores the image once; the same bytes again change nothing. */
    async put(sha256: string, contentType: string, bytes: Buffer): Promise<void> {
      await db
        .insert(tenantLogos)
        .values({ tenantId, sha256, contentType, data: bytes.toString('base64') })
        .onConflictDoNothing()
    },

    async get(sha256: string): Promise<StoredLogo | undefined> {
      const [row] = await db
        .select({ contentType: tenantLogos.contentType, data: tenantLogos.data })
        .from(tenantLogos)
        .where(and(eq(tenantLogos.tenantId, tenantId), eq(tenantLogos.sha256, sha256)))
      return row && { contentType: row.contentType, bytes: Buffer.from(row.data, 'base64') }
    },
  }
}
