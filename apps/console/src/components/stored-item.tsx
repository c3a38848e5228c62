import { Alert, Anchor } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Fragment } from 'react'
import { Link } from 'react-router'
import { describeError } from '../forms/problems'
import { Busy } from './busy'

/**
 * An editor page's item: loaded when `id` is set (editing), none when creating. The editor is
 * keyed by the item's `updatedAt`, so a newer version read later starts a fresh form.
 */
export function StoredItem<T extends { updatedAt: string }>({
  id,
  queryKey,
  load,
  listPath,
  children,
}: {
  id: string | undefined
  queryKey: readonly unknown[]
  load: (id: string) => Promise<T>
  /** Where the list is, for the way back when the item cannot be read. */
  listPath: string
  children: (item: T | undefined) => React.ReactElement
}) {
  const stored = useQuery({
    queryKey: [...queryKey, 'item', id],
    queryFn: () => load(id ?? ''),
    enabled: id !== undefined,
  })
  if (id === undefined) return children(undefined)
  if (stored.isPending) return <Busy label={`Loading ${id}`} />
  if (stored.isError)
    return (
      <Alert color="red" title={`Could not load ${id}`} role="alert">
        {describeError(stored.error)}{' '}
        <Anchor component={Link} to={listPath}>
          Back to the list
        </Anchor>
      </Alert>
    )
  return <Fragment key={stored.data.updatedAt}>{children(stored.data)}</Fragment>
}
