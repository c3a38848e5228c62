import { Code } from '@mantine/core'

/**
 * A live JSON document (what a form would send, a derived schema): scrollable, so it takes the
 * keyboard focus (axe scrollable-region-focusable) and is named for screen readers.
 */
export function JsonBlock({ label, testId, value }: { label: string; testId: string; value: unknown }) {
  return (
    <Code
      block
      data-testid={testId}
      tabIndex={0}
      aria-label={label}
      style={{ maxHeight: '75vh', overflow: 'auto' }}
    >
      {JSON.stringify(value, null, 2)}
    </Code>
  )
}
