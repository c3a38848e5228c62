import { InvalidInputError, type Page } from '@credential-service/core-domain'

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
