import { useEffect } from 'react'

const FIELD = 'input:not([type="hidden"]):not([disabled]), textarea:not([disabled]), select:not([disabled])'

/**
 * Dialogs open with their first field focused (issue 42 item 3): Mantine's focus trap focuses the
 * first tabbable element, the header's close button, so its focus moves on to the body's first
 * field, once per dialog. A dialog without fields (a confirmation) keeps the close button.
 */
export function useDialogFirstField() {
  useEffect(() => {
    const moved = new WeakSet<Element>()
    const onFocus = (event: FocusEvent) => {
      const target = event.target
      if (!(target instanceof HTMLElement) || !target.matches('.mantine-Modal-close')) return
      const dialog = target.closest('[role="dialog"]')
      if (!dialog || moved.has(dialog)) return
      moved.add(dialog)
      dialog.querySelector<HTMLElement>(`.mantine-Modal-body :is(${FIELD})`)?.focus()
    }
    document.addEventListener('focusin', onFocus)
    return () => document.removeEventListener('focusin', onFocus)
  }, [])
}
