import { Button, Card, Group, SimpleGrid, Text, TextInput } from '@mantine/core'
import { useState } from 'react'

/** A local time of a `datetime-local` input as the API's RFC 3339 UTC timestamp; undefined when empty. */
export const utc = (local: string) => (local ? new Date(local).toISOString() : undefined)

/**
 * A list's filters: what the inputs say (`draft`) and what the list shows (`applied`, set by
 * Apply filters); `set(name)` is an input's change handler.
 */
export function useFilters<F extends { [K in keyof F]: string }>(none: F) {
  const [draft, setDraft] = useState<F>(none)
  const [applied, setApplied] = useState<F>(none)
  return {
    draft,
    applied,
    set: (name: keyof F) => (value: string | null) => setDraft((all) => ({ ...all, [name]: value ?? '' })),
    apply: () => setApplied(draft),
    clear: () => {
      setDraft(none)
      setApplied(none)
    },
  }
}

/** Whether an item's text (every value it holds, as JSON) has each word of the search. */
export function matchesSearch(item: unknown, search: string): boolean {
  const words = search.toLowerCase().split(/\s+/).filter(Boolean)
  if (words.length === 0) return true
  const text = JSON.stringify(item).toLowerCase()
  return words.every((word) => text.includes(word))
}

/**
 * A search over the page of items already loaded (client-side, as you type): the items it keeps.
 * A list in a child component filters with `matchesSearch(item, search.value)` itself.
 */
export function useSearch<T>(loaded?: readonly T[]) {
  const [value, setValue] = useState('')
  return {
    value,
    setValue,
    total: loaded?.length,
    items: (loaded ?? []).filter((item) => matchesSearch(item, value)),
  }
}
export type Search = ReturnType<typeof useSearch>

/**
 * A list's filters, one component for every list (issue 42 item 3): the search over the loaded
 * page, and the API's own filters (children) with Apply filters and Clear when the list has them.
 */
export function FilterCard({
  label,
  filters,
  search,
  cols = { base: 1, sm: 2, lg: 4 },
  children,
}: {
  label: string
  filters?: { apply: () => void; clear: () => void }
  search?: Search
  cols?: { base: number; sm: number; lg: number }
  children?: React.ReactNode
}) {
  return (
    <Card withBorder>
      <form
        aria-label={label}
        onSubmit={(event) => {
          event.preventDefault()
          filters?.apply()
        }}
      >
        <SimpleGrid cols={cols}>
          {search && (
            <TextInput
              label="Search"
              description="Within the loaded page, as you type"
              type="search"
              value={search.value}
              onChange={(event) => search.setValue(event.currentTarget.value)}
            />
          )}
          {children}
        </SimpleGrid>
        {search?.value && search.total !== undefined && (
          <Text size="sm" mt="xs" aria-live="polite" data-testid="search-count">
            {search.items.length} of {search.total} shown
          </Text>
        )}
        {filters && (
          <Group mt="sm">
            <Button type="submit">Apply filters</Button>
            <Button
              variant="default"
              onClick={() => {
                filters.clear()
                search?.setValue('')
              }}
            >
              Clear
            </Button>
          </Group>
        )}
      </form>
    </Card>
  )
}
