import { InvalidInputError, type Page } from '@credential-service/core-domain'
import { type SQL, sql } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'

/**
 * Cursors are opaque to callers: the base64url of a JSON pair, the list they were handed out by
 * and the last id of the previous page. Naming the list lets a cursor of another list be refused
 * rather than read as a position in this one.
 */
export function encodeCursor(list: string, lastId: string): string {
  return Buffer.from(JSON.stringify([list, lastId]), 'utf8').toString('base64url')
}

/**
 * The last id of the previous page, or undefined for the first page. A cursor this list did not
 * hand out (garbage, not base64url, another list's) is an `InvalidInputError` at `query.cursor`:
 * decoded without these checks it could carry NUL or invalid UTF-8 into a query, which the
 * database refuses with an error that would surface as a 500.
 */
export function decodeCursor(cursor: string | undefined, list: string): string | undefined {
  if (cursor === undefined) return undefined
  const decoded = parseCursor(cursor)
  if (decoded?.[0] !== list) {
    const message = 'not a cursor of this list; pass nextCursor of the previous page unchanged'
    throw new InvalidInputError('the pagination cursor is invalid', [{ path: 'query.cursor', message }])
  }
  return decoded[1]
}

// NUL or a lone surrogate (JSON escapes can spell both): PostgreSQL refuses them in a text parameter.
const unstorable = (text: string) => text.includes('\u0000') || /\p{Cs}/u.test(text)

function parseCursor(cursor: string): [string, string] | undefined {
  const bytes = Buffer.from(cursor, 'base64url')
  // Buffer skips characters outside the alphabet: only a canonical encoding is one we made.
  if (bytes.toString('base64url') !== cursor) return undefined
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'))
    return Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      !unstorable(value[1])
      ? [value[0], value[1]]
      : undefined
  } catch {
    return undefined
  }
}

/** Turns `limit + 1` fetched rows of `list` into a page and the cursor of the next one. */
export function toPage<R, T>(
  list: string,
  rows: R[],
  limit: number,
  idOf: (row: R) => string,
  map: (row: R) => T,
): Page<T> {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  const nextCursor = rows.length > limit && last !== undefined ? encodeCursor(list, idOf(last)) : null
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
  const key = parseCursor(cursor)
  if (key && KEY_AT.test(key[0])) return { at: key[0], id: key[1] }
  const message = 'not a cursor of this list; pass nextCursor of the previous page unchanged'
  throw new InvalidInputError('the pagination cursor is invalid', [{ path: 'query.cursor', message }])
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
