import { InvalidInputError, type Page } from '@credential-service/core-domain'
import { type SQL, sql } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'

/** Cursors are opaque to callers: the base64url of the last id of the previous page. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  return cursor === undefined ? undefined : Buffer.from(cursor, 'base64url').toString('utf8')
}

/** Turns `limit + 1` fetched rows into a page and the cursor of the next one. */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  idOf: (row: R) => string,
  map: (row: R) => T,
): Page<T> {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  const nextCursor =
    rows.length > limit && last !== undefined ? Buffer.from(idOf(last), 'utf8').toString('base64url') : null
  return { items: items.map(map), nextCursor }
}

/** Position of a row in a newest-first list: its timestamp (microseconds, UTC) and id. */
export interface ListKey {
  at: string
  id: string
}

const KEY_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/**
 * A timestamp column as fixed-width UTC text with microseconds: JavaScript dates stop at
 * milliseconds, and a cursor rounded to them would skip or repeat rows. Fixed width also makes the
 * text sort as the time does.
 */
export function keyCursorText(column: AnyPgColumn) {
  return sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
}

/** Rows after `key` in the order `at desc, id desc` (ids compared bytewise, as `compareKeys` does). */
export function afterKey(at: AnyPgColumn, id: AnyPgColumn, key: ListKey): SQL {
  return sql`(${at}, ${id} collate "C") < (${key.at}::timestamptz, ${key.id} collate "C")`
}

/** Newest first, then id descending, bytewise: the order of `afterKey` and of merged lists. */
export function compareKeys(a: ListKey, b: ListKey): number {
  if (a.at !== b.at) return a.at < b.at ? 1 : -1
  if (a.id === b.id) return 0
  return a.id < b.id ? 1 : -1
}

/** The position a cursor of `toKeyPage` names; a cursor this service never handed out is a 400. */
export function decodeKeyCursor(cursor: string | undefined): ListKey | undefined {
  if (cursor === undefined) return undefined
  let key: unknown
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    key = undefined
  }
  if (
    Array.isArray(key) &&
    key.length === 2 &&
    typeof key[0] === 'string' &&
    KEY_AT.test(key[0]) &&
    typeof key[1] === 'string'
  ) {
    return { at: key[0], id: key[1] }
  }
  const message = 'not a cursor of this list; pass nextCursor of the previous page'
  throw new InvalidInputError(message, [{ path: 'querystring.cursor', message }])
}

/** Turns `limit + 1` rows (in list order, each with its key) into a page and the next cursor. */
export function toKeyPage<T>(rows: { item: T; key: ListKey }[], limit: number): Page<T> {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  const nextCursor =
    rows.length > limit && last
      ? Buffer.from(JSON.stringify([last.key.at, last.key.id]), 'utf8').toString('base64url')
      : null
  return { items: page.map((row) => row.item), nextCursor }
}
