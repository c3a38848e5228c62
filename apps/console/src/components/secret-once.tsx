import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from '@mantine/core'

/**
 * A client secret, shown this once (the API never returns it again): copy it, then close. The
 * console keeps it nowhere after the dialog closes.
 */
export function SecretOnce({
  clientId,
  secret,
  onClose,
}: {
  clientId: string
  secret: string | undefined
  onClose: () => void
}) {
  return (
    <Modal opened={secret !== undefined} onClose={onClose} title="Client secret" centered>
      <Stack>
        <Alert color="yellow" title="Shown only this once">
          Store the secret of <strong>{clientId}</strong> now: it cannot be shown again. A new one needs a
          rotation.
        </Alert>
        <Text size="sm" fw={500}>
          Secret
        </Text>
        <Code block data-testid="client-secret">
          {secret}
        </Code>
        <Group justify="flex-end">
          <CopyButton value={secret ?? ''}>
            {({ copied, copy }) => (
              <Button variant="light" onClick={copy}>
                {copied ? 'Copied' : 'Copy secret'}
              </Button>
            )}
          </CopyButton>
          <Button onClick={onClose}>I have stored it</Button>
        </Group>
      </Stack>
    </Modal>
  )
}
