import { Alert } from '@mantine/core'

/** The form's own message (a refusal no field explains), announced to screen readers. */
export function FormAlert({ message, title = 'Not saved' }: { message: React.ReactNode; title?: string }) {
  if (!message) return null
  return (
    <Alert color="red" title={title} role="alert">
      {message}
    </Alert>
  )
}
