import { Loader } from '@mantine/core'

/**
 * A spinner that assistive technology announces: Mantine's Loader is a plain element, on which
 * an aria-label alone is prohibited (axe aria-prohibited-attr) unless it has a role.
 */
export function Busy({ label, size }: { label: string; size?: 'sm' }) {
  return <Loader size={size} role="status" aria-label={label} />
}
