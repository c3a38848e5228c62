import { Button, type ButtonProps, Group, Modal, Stack, Text } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useMutation } from '@tanstack/react-query'
import { describeError } from '../forms/problems'
import { FormAlert } from './form-alert'
import { toastDone } from './toast'

export interface ConfirmButtonProps extends ButtonProps {
  /** What the button and the confirming button say, e.g. "Delete". */
  label: string
  /** The dialog's title, e.g. "Delete tenant acme?". */
  title: string
  /** What happens, and what cannot be undone. */
  message: React.ReactNode
  onConfirm: () => Promise<unknown>
  onDone?: () => void
  /** The success toast; the title without its question mark, then "done", when absent. */
  done?: string
}

/** A destructive action, asked for again in a dialog before it is done (issue 22). */
export function ConfirmButton({
  label,
  title,
  message,
  onConfirm,
  onDone,
  done,
  ...button
}: ConfirmButtonProps) {
  const [opened, { open, close }] = useDisclosure(false)
  const action = useMutation({
    mutationFn: onConfirm,
    onSuccess: () => {
      close()
      toastDone(done ?? `${title.replace(/\?$/, '')}: done`)
      onDone?.()
    },
  })
  return (
    <>
      <Button color="red" variant="light" size="xs" {...button} onClick={open}>
        {label}
      </Button>
      <Modal opened={opened} onClose={close} title={title} centered>
        <Stack>
          <Text>{message}</Text>
          <FormAlert message={action.error ? describeError(action.error) : undefined} />
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" loading={action.isPending} onClick={() => action.mutate()}>
              {label}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  )
}
