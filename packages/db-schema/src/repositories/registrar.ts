import type { RegistrarConfig, RegistrationCertificate } from '@credential-service/core-domain'
import { and, eq } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import {
  type RegistrarConfigRow,
  type RegistrationCertificateRow,
  registrarConfigs,
  registrationCertificates,
} from '../schema'

/** The public view of a registrar configuration: never the client secret. */
export function toRegistrarConfig(row: RegistrarConfigRow): RegistrarConfig {
  return {
    baseUrl: row.baseUrl,
    tokenUrl: row.tokenUrl,
    clientId: row.clientId,
    relyingParty:
      row.relyingPartyId && row.registeredAt
        ? {
            id: row.relyingPartyId,
            name: row.relyingPartyName ?? '',
            roles: (row.relyingPartyRoles ?? []) as ('verifier' | 'issuer')[],
            registeredAt: row.registeredAt.toISOString(),
          }
        : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export function toRegistrationCertificate(row: RegistrationCertificateRow): RegistrationCertificate {
  return {
    presentationConfigId: row.presentationConfigId,
    registrarCertificateId: row.registrarCertificateId,
    jwt: row.jwt,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  }
}

export type RegistrarConfigValues = Omit<typeof registrarConfigs.$inferInsert, 'tenantId' | 'createdAt'>
export type RegistrationCertificateValues = Omit<
  typeof registrationCertificates.$inferInsert,
  'tenantId' | 'createdAt'
>

/** The registrar configuration and registration certificates of one tenant. */
export function createRegistrarRepository(db: Database, tenantId: string) {
  const certificateOf = (presentationConfigId: string) =>
    and(
      eq(registrationCertificates.tenantId, tenantId),
      eq(registrationCertificates.presentationConfigId, presentationConfigId),
    )
  return {
    async get(tx: Executor = db): Promise<RegistrarConfigRow | undefined> {
      const [row] = await tx.select().from(registrarConfigs).where(eq(registrarConfigs.tenantId, tenantId))
      return row
    },
    /** Insert or replace; `createdAt` survives a replace. */
    async put(values: RegistrarConfigValues, tx: Executor = db): Promise<RegistrarConfigRow> {
      const row = { ...values, tenantId, updatedAt: new Date() }
      const [saved] = await tx
        .insert(registrarConfigs)
        .values(row)
        .onConflictDoUpdate({ target: registrarConfigs.tenantId, set: row })
        .returning()
      return saved as RegistrarConfigRow
    },
    async update(
      values: Partial<RegistrarConfigValues>,
      tx: Executor = db,
    ): Promise<RegistrarConfigRow | undefined> {
      const [saved] = await tx
        .update(registrarConfigs)
        .set({ ...values, updatedAt: new Date() })
        .where(eq(registrarConfigs.tenantId, tenantId))
        .returning()
      return saved
    },
    async delete(tx: Executor = db): Promise<boolean> {
      const rows = await tx
        .delete(registrarConfigs)
        .where(eq(registrarConfigs.tenantId, tenantId))
        .returning({ tenantId: registrarConfigs.tenantId })
      return rows.length > 0
    },
    async registrationCertificate(
      presentationConfigId: string,
      tx: Executor = db,
    ): Promise<RegistrationCertificateRow | undefined> {
      const [row] = await tx
        .select()
        .from(registrationCertificates)
        .where(certificateOf(presentationConfigId))
      return row
    },
    /** Every registration certificate of the tenant, by presentation configuration. */
    async registrationCertificates(): Promise<Map<string, RegistrationCertificateRow>> {
      const rows = await db
        .select()
        .from(registrationCertificates)
        .where(eq(registrationCertificates.tenantId, tenantId))
      return new Map(rows.map((row) => [row.presentationConfigId, row]))
    },
    async putRegistrationCertificate(
      values: RegistrationCertificateValues,
      tx: Executor = db,
    ): Promise<RegistrationCertificateRow> {
      const row = { ...values, tenantId, createdAt: new Date() }
      const [saved] = await tx
        .insert(registrationCertificates)
        .values(row)
        .onConflictDoUpdate({
          target: [registrationCertificates.tenantId, registrationCertificates.presentationConfigId],
          set: row,
        })
        .returning()
      return saved as RegistrationCertificateRow
    },
  }
}
export type RegistrarRepository = ReturnType<typeof createRegistrarRepository>
