import { Alert, Button, Container, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core'
import { useForm } from '@mantine/form'
import { useMutation } from '@tanstack/react-query'
import { useAuth } from '../auth/auth'
import { Busy } from '../components/busy'
import { FormAlert } from '../components/form-alert'
import { describeError } from '../forms/problems'

/**
 * Sign-in: client credentials at the built-in token server (spec §5.3), or, in OIDC mode with a
 * console client, the identity provider's login (authorization code + PKCE). The page stays on
 * the URL it was opened at, which renders once signed in.
 */
export function SignInPage() {
  const { config, configError, completing, notice } = useAuth()
  const body =
    configError !== undefined ? (
      <Alert color="red" title="The console cannot start" role="alert">
        {describeError(configError)} Reload the page to try again.
      </Alert>
    ) : !config || completing ? (
      <Busy label={completing ? 'Signing in' : 'Loading'} />
    ) : config.mode === 'oidc' ? (
      <ProviderSignIn />
    ) : (
      <ClientCredentialsSignIn />
    )
  return (
    <Container size={420} py="xl" component="main">
      <Stack>
        <Title order={1}>Credential service console</Title>
        {notice && (
          <Alert color="blue" role="status">
            {notice}
          </Alert>
        )}
        {body}
        <Text size="sm" c="dimmed">
          {config?.mode === 'oidc'
            ? 'The token stays in this tab’s memory only: reloading the page or signing out forgets it.'
            : 'The service keeps your session (no token reaches this page) until you sign out or leave it unused.'}
        </Text>
      </Stack>
    </Container>
  )
}

/** OIDC mode: the provider's login page, then back here with a code (auth/oidc-sign-in.ts). */
function ProviderSignIn() {
  const { signInWithProvider } = useAuth()
  const leave = useMutation({ mutationFn: signInWithProvider })
  return (
    <Stack>
      <Text c="dimmed">
        Sign in at your organisation’s identity provider: its roles decide what you can see and do.
      </Text>
      <FormAlert title="Not signed in" message={leave.error ? describeError(leave.error) : undefined} />
      <Button onClick={() => leave.mutate()} loading={leave.isPending || leave.isSuccess}>
        Sign in with the identity provider
      </Button>
    </Stack>
  )
}

function ClientCredentialsSignIn() {
  const { signIn } = useAuth()
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
    <Stack>
      <Text c="dimmed">Sign in with an API client: its roles decide what you can see and do.</Text>
      <form onSubmit={form.onSubmit((values) => login.mutate(values))} noValidate>
        <Stack>
          <TextInput label="Client id" autoComplete="username" required {...form.getInputProps('clientId')} />
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
    </Stack>
  )
}
