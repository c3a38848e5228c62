import { Alert, Button, Container, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core'
import { useForm } from '@mantine/form'
import { useMutation } from '@tanstack/react-query'
import { useAuth } from '../auth/auth'
import { FormAlert } from '../components/form-alert'
import { describeError } from '../forms/problems'

/**
 * Client credentials sign-in (built-in token server, spec §5.3). The page stays on the URL it was
 * opened at, which renders once signed in.
 */
export function SignInPage() {
  const { signIn, notice } = useAuth()
  const form = useForm({
    mode: 'controlled',
    initialValues: { clientId: '', clientSecret: '' },
    validate: {
      clientId: (value) => (value.trim() ? null : 'Enter the client id'),
      clientSecret: (value) => (value ? null : 'Enter the client secret'),
    },
  })
  const login = useMutation({
    mutationFn: (values: { clientId: string; clientSecret: string }) =>
      signIn(values.clientId.trim(), values.clientSecret),
  })
  const refused = login.error
    ? login.error instanceof Error && 'status' in login.error && login.error.status === 401
      ? 'The client id or secret is wrong.'
      : describeError(login.error)
    : undefined
  return (
    <Container size={420} py="xl" component="main">
      <Stack>
        <Title order={1}>Credential service console</Title>
        <Text c="dimmed">Sign in with an API client: its roles decide what you can see and do.</Text>
        {notice && (
          <Alert color="blue" role="status">
            {notice}
          </Alert>
        )}
        <form onSubmit={form.onSubmit((values) => login.mutate(values))} noValidate>
          <Stack>
            <TextInput
              label="Client id"
              autoComplete="username"
              required
              {...form.getInputProps('clientId')}
            />
            <PasswordInput
              label="Client secret"
              autoComplete="current-password"
              required
              {...form.getInputProps('clientSecret')}
            />
            <FormAlert title="Not signed in" message={refused} />
            <Button type="submit" loading={login.isPending}>
              Sign in
            </Button>
          </Stack>
        </form>
        <Text size="sm" c="dimmed">
          The token stays in this tab’s memory only: reloading the page or signing out forgets it.
        </Text>
      </Stack>
    </Container>
  )
}
