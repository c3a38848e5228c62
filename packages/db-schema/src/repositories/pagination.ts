import type { Page } from '@credential-service/core-domain'

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
