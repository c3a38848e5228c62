import { Alert, Button, Group, Text } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { describeError } from '../forms/problems'
import { Busy } from './busy'

/** A page of a list route: its items and the cursor of the next (null on the last). */
export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

export const PAGE_SIZE = 20

/**
 * A list read page by page with the API's cursors (`limit`, `cursor`, `nextCursor`); the cursors
 * of the pages before are kept, so Previous goes back without a cursor of its own.
 */
export function useCursorPages<T>(
  queryKey: readonly unknown[],
  fetchPage: (query: { limit: number; cursor?: string }) => Promise<Page<T>>,
  enabled = true,
) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const cursor = cursors[cursors.length - 1]
  const query = useQuery({
    queryKey: [...queryKey, 'page', cursor ?? ''],
    queryFn: () => fetchPage({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
    placeholderData: keepPreviousData,
    enabled,
  })
  const next = query.data?.nextCursor
  return {
    query,
    pageNumber: cursors.length,
    next: next ? () => setCursors((all) => [...all, next]) : undefined,
    previous: cursors.length > 1 ? () => setCursors((all) => all.slice(0, -1)) : undefined,
    /** Back to the first page (after a create or delete changed the list). */
    reset: () => setCursors([undefined]),
  }
}

/** Loading and failure of a list, and Previous / Next under it. */
export function PagerBar({
  pages,
  label,
}: {
  pages: ReturnType<typeof useCursorPages<unknown>>
  label: string
}) {
  const { query, pageNumber, next, previous } = pages
  return (
    <>
      {query.isPending && <Busy size="sm" label={`Loading ${label}`} />}
      {query.isError && (
        <Alert color="red" title={`Could not load ${label}`} role="alert">
          {describeError(query.error)}
        </Alert>
      )}
      {(next || previous) && (
        <Group justify="space-between" component="nav" aria-label={`Pages of ${label}`}>
          <Button variant="default" size="xs" disabled={!previous} onClick={previous}>
            Previous page
          </Button>
          <Text size="sm">Page {pageNumber}</Text>
          <Button variant="default" size="xs" disabled={!next} onClick={next}>
            Next page
          </Button>
        </Group>
      )}
    </>
  )
}
