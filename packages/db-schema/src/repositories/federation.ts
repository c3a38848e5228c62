import { and, eq } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import {
  credentialConfigs,
  type FederationMembershipRow,
  federationMemberships,
  presentationConfigs,
} from '../schema'

export type FederationMembershipValues = Omit<
  typeof federationMemberships.$inferInsert,
  'tenantId' | 'createdAt' | 'updatedAt'
>

/** The federation membership of one tenant (one row). */
export function createFederationRepository(db: Database, tenantId: string) {
  const mine = eq(federationMemberships.tenantId, tenantId)
  return {
    async get(tx: Executor = db): Promise<FederationMembershipRow | undefined> {
      const [row] = await tx.select().from(federationMemberships).where(mine)
      return row
    },
    /** Insert or replace; `createdAt` survives a replace. */
    async put(values: FederationMembershipValues, tx: Executor = db): Promise<FederationMembershipRow> {
      const row = { ...values, tenantId, updatedAt: new Date() }
      const [saved] = await tx
        .insert(federationMemberships)
        .values(row)
        .onConflictDoUpdate({ target: federationMemberships.tenantId, set: row })
        .returning()
      return saved as FederationMembershipRow
    },
    /** The configurations signing with `keyChainId` (`credential <id>`, `presentation <id>`), a few at most. */
    async configsSigningWith(keyChainId: string, tx: Executor = db): Promise<string[]> {
      const [credentials, presentations] = await Promise.all([
        tx
          .select({ id: credentialConfigs.id })
          .from(credentialConfigs)
          .where(and(eq(credentialConfigs.tenantId, tenantId), eq(credentialConfigs.keyChainId, keyChainId)))
          .limit(3),
        tx
          .select({ id: presentationConfigs.id })
          .from(presentationConfigs)
          .where(
            and(eq(presentationConfigs.tenantId, tenantId), eq(presentationConfigs.keyChainId, keyChainId)),
          )
          .limit(3),
      ])
      return [
        ...credentials.map((row) => `credential ${row.id}`),
        ...presentations.map((row) => `presentation ${row.id}`),
      ]
    },
    async delete(tx: Executor = db): Promise<boolean> {
      const deleted = await tx
        .delete(federationMemberships)
        .where(mine)
        .returning({ id: federationMemberships.tenantId })
      return deleted.length > 0
    },
  }
}
export type FederationRepository = ReturnType<typeof createFederationRepository>
