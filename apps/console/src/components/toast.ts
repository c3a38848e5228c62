import { notifications } from '@mantine/notifications'

/**
 * A success toast after a create, update or delete (issue 42 item 3); it closes by itself. A
 * status, not an alert: news that interrupts nothing (Mantine's default role is alert).
 */
export function toastDone(message: string) {
  notifications.show({
    message,
    color: 'green',
    autoClose: 5000,
    withBorder: true,
    role: 'status',
    // An icon button: give it a name (axe button-name).
    closeButtonProps: { 'aria-label': 'Close' },
  })
}
