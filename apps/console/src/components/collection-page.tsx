import { Button, Group, Modal, Stack, Table, Text, VisuallyHidden } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { canWrite, PAGES, type PageKey } from '../access'
import { useSession } from '../auth/auth'
import { ConfirmButton } from './confirm-button'
import { type Page, PagerBar, useCursorPages } from './cursor-pages'
import { FilterCard, useSearch } from './filter-card'
import { SecretOnce } from './secret-once'
import { PageTitle } from './shell'

/** The routes of a tenant's collection the page calls (the SDK's `…OfTenant` methods). */
export interface CollectionApi<T, Body, Saved> {
  list: (query: { limit: number; cursor?: string }) => Promise<Page<T>>
  create: (body: Body) => Promise<Saved>
  replace: (id: string, body: Body) => Promise<Saved>
  remove: (id: string) => Promise<unknown>
}

export interface Column<T> {
  header: string
  cell: (item: T) => React.ReactNode
}

/** A list read by cursor pages, and what to call after a change: back to page 1, read again. */
export function useCollection<T>(
  queryKey: readonly unknown[],
  list: (query: { limit: number; cursor?: string }) => Promise<Page<T>>,
) {
  const queryClient = useQueryClient()
  const pages = useCursorPages(queryKey, list)
  const changed = () => {
    pages.reset()
    return queryClient.invalidateQueries({ queryKey })
  }
  return { pages, changed }
}

/** The create or edit form of a collection's item: `stored` undefined when creating. */
export interface ItemFormProps<T, Body, Saved = T> {
  stored: T | undefined
  submit: (body: Body) => Promise<Saved>
  onSaved: (saved: Saved) => void
}

export interface CollectionPageProps<T extends { id: string }, Body, Saved> {
  page: PageKey
  /** The singular, lowercase: "attribute provider". */
  noun: string
  api: CollectionApi<T, Body, Saved>
  columns: Column<T>[]
  /** What deleting one does (and when the API refuses it). */
  deleteMessage: string
  /** The create form (`stored` undefined) or the edit form of `stored`; `onSaved` with the answer. */
  form: (props: { stored: T | undefined; onSaved: (saved: Saved) => void }) => React.ReactElement
  /** More buttons of a row (before Edit and Delete). */
  rowActions?: (item: T) => React.ReactNode
  /** A secret the create or replace answer shows once (an HMAC signing secret). */
  secretOf?: (saved: Saved) => string | undefined
  intro?: React.ReactNode
}

/**
 * A tenant's collection (providers, endpoints): the list in cursor pages, create and edit (PUT)
 * in a dialog, delete confirmed, and a secret the answer carries shown once.
 */
export function CollectionPage<T extends { id: string }, Body, Saved extends { id: string }>(
  props: CollectionPageProps<T, Body, Saved>,
) {
  const { page, noun, api, columns, deleteMessage, form, rowActions, secretOf, intro } = props
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const { label } = PAGES[page]
  const { pages, changed } = useCollection([page, tenantId], api.list)
  const search = useSearch(pages.query.data?.items)
  // undefined: no dialog; null: creating; an item: editing it.
  const [editing, setEditing] = useState<T | null>()
  const [secret, setSecret] = useState<{ id: string; value: string }>()
  const writable = canWrite(session, page)
  const onSaved = (saved: Saved) => {
    setEditing(undefined)
    const value = secretOf?.(saved)
    if (value) setSecret({ id: saved.id, value })
    void changed()
  }
  return (
    <Stack>
      <PageTitle title={`${label} of ${tenantId}`}>
        {writable && <Button onClick={() => setEditing(null)}>Create {noun}</Button>}
      </PageTitle>
      {intro}
      <FilterCard label={`Search ${label.toLowerCase()}`} search={search} />
      <Table striped aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Id</Table.Th>
            {columns.map((column) => (
              <Table.Th key={column.header}>{column.header}</Table.Th>
            ))}
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {search.items.map((item) => (
            <Table.Tr key={item.id}>
              <Table.Td>{item.id}</Table.Td>
              {columns.map((column) => (
                <Table.Td key={column.header}>{column.cell(item)}</Table.Td>
              ))}
              <Table.Td>
                <Group gap="xs" justify="flex-end" wrap="nowrap">
                  {rowActions?.(item)}
                  {writable && (
                    <>
                      <Button
                        variant="default"
                        size="xs"
                        aria-label={`Edit ${item.id}`}
                        onClick={() => setEditing(item)}
                      >
                        Edit
                      </Button>
                      <ConfirmButton
                        label="Delete"
                        aria-label={`Delete ${item.id}`}
                        title={`Delete ${noun} ${item.id}?`}
                        message={deleteMessage}
                        onConfirm={() => api.remove(item.id)}
                        onDone={() => void changed()}
                      />
                    </>
                  )}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No {noun} yet.</Text>}
      <PagerBar pages={pages} label={label.toLowerCase()} />
      <Modal
        opened={editing !== undefined}
        onClose={() => setEditing(undefined)}
        title={editing ? `Edit ${noun} ${editing.id}` : `Create ${noun}`}
        size="lg"
      >
        {editing !== undefined && form({ stored: editing ?? undefined, onSaved })}
      </Modal>
      <SecretOnce
        clientId={secret?.id ?? ''}
        secret={secret?.value}
        onClose={() => setSecret(undefined)}
        title="Signing secret"
        renewal="Requests are signed with it (HMAC-SHA256); another needs the authentication changed to HMAC again."
        testId="signing-secret"
      />
    </Stack>
  )
}
