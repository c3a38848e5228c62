import { Button, Card, Group, SimpleGrid } from '@mantine/core'
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

/** The filters' form: its inputs in a grid, Apply filters and Clear. */
export function FilterCard({
  label,
  filters,
  cols,
  children,
}: {
  label: string
  filters: { apply: () => void; clear: () => void }
  cols: { base: number; sm: number; lg: number }
  children: React.ReactNode
}) {
  return (
    <Card withBorder>
      <form
        aria-label={label}
        onSubmit={(event) => {
          event.preventDefault()
          filters.apply()
        }}
      >
        <SimpleGrid cols={cols}>{children}</SimpleGrid>
        <Group mt="sm">
          <Button type="submit">Apply filters</Button>
          <Button variant="default" onClick={filters.clear}>
            Clear
          </Button>
        </Group>
      </form>
    </Card>
  )
}
