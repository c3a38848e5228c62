import { sql } from 'drizzle-orm'
import {
  check,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { keyChains } from './key-chains'
import { tenants } from './tenants'

/**
 * Token Status Lists (draft-ietf-oauth-status-list) of one tenant, per key chain: `size` entries of
 * `bits` bits each, of which at most `capacity` are handed out (random indexes stay cheap to find
 * while the list is at most half full). `version` moves with every status change; `token` is the
 * last signed list token and `token_version` the version it shows.
 */
export const statusLists = pgTable(
  'status_lists',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    keyChainId: text().notNull(),
    /** 1, 2, ... per key chain: two pods that open a list at once collide on it, one list wins. */
    seq: integer().notNull(),
    bits: integer().notNull(),
    size: integer().notNull(),
    capacity: integer().notNull(),
    allocated: integer().notNull().default(0),
    version: integer().notNull().default(0),
    token: text(),
    tokenVersion: integer(),
    tokenSignedAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    // A list is signed with its key chain for as long as credentials name it: the chain cannot be
    // deleted while it has lists. NO ACTION (checked at the end of the statement), not RESTRICT,
    // so that deleting the tenant cascades to both tables in any order.
    foreignKey({
      name: 'status_lists_key_chain_fk',
      columns: [t.tenantId, t.keyChainId],
      foreignColumns: [keyChains.tenantId, keyChains.id],
    }).onDelete('no action'),
    uniqueIndex('status_lists_key_chain_seq').on(t.tenantId, t.keyChainId, t.seq),
    check('status_lists_bits', sql`${t.bits} in (1, 2, 4, 8)`),
    // TSL §4.1: the byte array holds whole bytes.
    check('status_lists_size', sql`${t.size} > 0 and (${t.size} * ${t.bits}) % 8 = 0`),
    check('status_lists_allocated', sql`${t.allocated} >= 0 and ${t.allocated} <= ${t.capacity}`),
    check('status_lists_capacity', sql`${t.capacity} > 0 and ${t.capacity} <= ${t.size}`),
  ],
)
export type StatusListRow = typeof statusLists.$inferSelect

/**
 * One allocated index of a list: the credential it went to (session, configuration, the offer's
 * optional business handle) and its status (0 VALID, 1 INVALID, 2 SUSPENDED). Unallocated indexes
 * have no row and read as VALID. The primary key is what makes an index impossible to hand out twice.
 */
export const statusListEntries = pgTable(
  'status_list_entries',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    listId: text().notNull(),
    idx: integer().notNull(),
    status: smallint().notNull().default(0),
    sessionId: text().notNull(),
    credentialConfigurationId: text().notNull(),
    handle: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.listId, t.idx] }),
    foreignKey({
      name: 'status_list_entries_list_fk',
      columns: [t.tenantId, t.listId],
      foreignColumns: [statusLists.tenantId, statusLists.id],
    }).onDelete('cascade'),
    index('status_list_entries_session').on(t.tenantId, t.sessionId),
    index('status_list_entries_handle').on(t.tenantId, t.handle),
    // Only statuses that are not VALID are read to build a list token.
    index('status_list_entries_set').on(t.tenantId, t.listId).where(sql`${t.status} <> 0`),
    check('status_list_entries_status', sql`${t.status} in (0, 1, 2)`),
    check('status_list_entries_idx', sql`${t.idx} >= 0`),
  ],
)
