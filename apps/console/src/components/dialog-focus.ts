import { useEffect } from 'react'

const FIELD = 'input:not([type="hidden"]):not([disabled]), textarea:not([disabled]), select:not([disabled])'

/**
 * Dialogs open with their first field focused (issue 42 item 3). Mantine's focus trap focuses
 * the element marked `data-autofocus`, else the first tabbable one: the header's close button.
 * Each dialog added to the page gets its first field marked before the trap looks (a mutation
 * observer runs before the trap's timer); a dialog without fields keeps the close button.
 */
export function useDialogFirstField() {
  useEffect(() => {
    const mark = (dialog: Element) => {
      if (dialog.querySelector('[data-autofocus]')) return
      dialog.querySelector(`.mantine-Modal-body :is(${FIELD})`)?.setAttribute('data-autofocus', '')
    }
    const observer = new MutationObserver((mutations) => {
      for (const mutation of mutations)
        for (const node of mutation.addedNodes) {
          if (!(node instanceof Element)) continue
          if (node.matches('[role="dialog"]')) mark(node)
          for (const dialog of node.querySelectorAll('[role="dialog"]')) mark(dialog)
        }
    })
    observer.observe(document.body, { childList: true, subtree: true })
    return () => observer.disconnect()
  }, [])
}
