import { type SessionResultRequest, zSessionResultRequest } from '@credential-service/core-domain'
import type { PresentationSession } from '@credential-service/sdk'
import { Button, Group, PasswordInput, Stack, Text } from '@mantine/core'
import { useSession } from '../auth/auth'
import { FormAlert } from '../components/form-alert'
import { useApiForm } from '../forms/use-api-form'

/**
 * Same-device presentations (OpenID4VP §8.2, HAIP): the claims are released once, with the
 * `response_code` the wallet's redirect brought to the browser that started the flow.
 */
export function ReleaseResultForm({
  sessionId,
  onReleased,
}: {
  sessionId: string
  onReleased: (session: PresentationSession) => void
}) {
  const { api, activeTenant } = useSession()
  const { form, onSubmit, pending } = useApiForm({
    success: false,
    initialValues: { responseCode: '' },
    fields: ['responseCode'],
    schema: zSessionResultRequest,
    toBody: (values): SessionResultRequest => ({ responseCode: values.responseCode.trim() }),
    submit: (body) => api.releaseSessionResultOfTenant(activeTenant ?? '', sessionId, body),
    onDone: onReleased,
  })
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Release the claims">
      <Stack gap="xs">
        <Text size="sm">
          Verified on the holder’s device: its claims are released once, with the response code the wallet
          sent back to the redirect URI.
        </Text>
        <Group align="flex-end">
          <PasswordInput label="Response code" autoComplete="off" {...form.getInputProps('responseCode')} />
          <Button type="submit" loading={pending}>
            Release the claims
          </Button>
        </Group>
        <FormAlert message={form.errors['']} title="Not released" />
      </Stack>
    </form>
  )
}
