import { pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { tenants } from './tenants'

/**
 * Logos a tenant uploaded for its issuer display (issue 42), content-addressed: the key is the
 * SHA-256 of the bytes, so a URL always names the same image and can be cached for good.
 */
export const tenantLogos = pgTable(
  'tenant_logos',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** Lowercase hex SHA-256 of the image. */
    sha256: text().notNull(),
    contentType: text().notNull(),
    /** The image, base64 (the same text on PGlite and postgres.js). */
    data: text().notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.sha256] })],
)
