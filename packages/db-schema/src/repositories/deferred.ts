import { and, eq, lte, sql } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import {
  type CredentialEncryptionKeyRow,
  credentialEncryptionKeys,
  type DeferredCredentialRow,
  deferredCredentials,
} from '../schema'

export type NewDeferredCredential = Omit<
  typeof deferredCredentials.$inferInsert,
  'tenantId' | 'createdAt' | 'updatedAt'
>

/** Deferred issuance transactions of one tenant (OpenID4VCI 1.0 §9), keyed by the hashed transaction id. */
export function createDeferredCredentialRepository(db: Database, tenantId: string) {
  const byHash = (hash: string, sessionId: string) =>
    and(
      eq(deferredCredentials.tenantId, tenantId),
      eq(deferredCredentials.transactionIdHash, hash),
      eq(deferredCredentials.sessionId, sessionId),
    )
  return {
    async insert(row: NewDeferredCredential, tx: Executor = db): Promise<void> {
      await tx.insert(deferredCredentials).values({ ...row, tenantId })
    },

    /** The transaction of `sessionId` with this hash; another session's reads as not found. */
    async get(hash: string, sessionId: string): Promise<DeferredCredentialRow | undefined> {
      const [row] = await db.select().from(deferredCredentials).where(byHash(hash, sessionId))
      return row
    },

    /**
     * Leases the transaction to one poll until `until`: true for the one poll that may ask the
     * provider now; false while another poll holds it, or before the interval since its last answer.
     */
    async lease(hash: string, sessionId: string, now: Date, until: Date): Promise<boolean> {
      const rows = await db
        .update(deferredCredentials)
        .set({ nextAskAt: until })
        .where(and(byHash(hash, sessionId), lte(deferredCredentials.nextAskAt, now)))
        .returning({ hash: deferredCredentials.transactionIdHash })
      return rows.length === 1
    },

    /**
     * Ends a lease that delivered nothing: the provider is asked again `interval` seconds after `now`
     * (its latest suggestion, which the wallet is told as well).
     */
    async release(hash: string, sessionId: string, now: Date, interval: number): Promise<void> {
      await db
        .update(deferredCredentials)
        .set({
          nextAskAt: new Date(now.getTime() + interval * 1000),
          intervalSeconds: interval,
          updatedAt: sql`now()`,
        })
        .where(byHash(hash, sessionId))
    },

    /** Ends the transaction; true for the one caller that deletes it (delivery is single-use). */
    async take(hash: string, sessionId: string, tx: Executor = db): Promise<boolean> {
      const rows = await tx
        .delete(deferredCredentials)
        .where(byHash(hash, sessionId))
        .returning({ hash: deferredCredentials.transactionIdHash })
      return rows.length === 1
    },
  }
}
export type DeferredCredentialRepository = ReturnType<typeof createDeferredCredentialRepository>

/** The tenant's credential request encryption key (OpenID4VCI 1.0 §10). */
export function createCredentialEncryptionKeyRepository(db: Database, tenantId: string) {
  return {
    async get(): Promise<CredentialEncryptionKeyRow | undefined> {
      const [row] = await db
        .select()
        .from(credentialEncryptionKeys)
        .where(eq(credentialEncryptionKeys.tenantId, tenantId))
      return row
    },

    /** Stores the key unless one exists; answers the stored one (the first of two racing pods wins). */
    async ensure(
      row: Omit<CredentialEncryptionKeyRow, 'tenantId' | 'createdAt'>,
    ): Promise<CredentialEncryptionKeyRow> {
      await db
        .insert(credentialEncryptionKeys)
        .values({ ...row, tenantId })
        .onConflictDoNothing()
      const stored = await this.get()
      if (!stored) throw new Error(`the credential encryption key of tenant '${tenantId}' was not stored`)
      return stored
    },
  }
}
