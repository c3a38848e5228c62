import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from '@mantine/core'

/**
 * A secret shown this once (the API never returns it again): a client secret by default, or an
 * endpoint's HMAC signing secret. Copy it, then close; the console keeps it nowhere after.
 */
export function SecretOnce({
  clientId,
  secret,
  onClose,
  title = 'Client secret',
  renewal = 'A new one needs a rotation.',
  testId = 'client-secret',
}: {
  /** Whose secret it is (a client id, an endpoint id). */
  clientId: string
  secret: string | undefined
  onClose: () => void
  title?: string
  /** How another secret is obtained. */
  renewal?: string
  testId?: string
}) {
  return (
    <Modal opened={secret !== undefined} onClose={onClose} title={title} centered>
      <Stack>
        <Alert color="yellow" title="Shown only this once">
          Store the secret of <strong>{clientId}</strong> now: it cannot be shown again. {renewal}
        </Alert>
        <Text size="sm" fw={500}>
          Secret
        </Text>
        <Code block data-testid={testId}>
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
