import { type LoginProviderInput, zLoginProviderInput } from '@credential-service/core-domain'
import type { LoginProvider } from '@credential-service/sdk'
import { Badge, Button, PasswordInput, Select, Stack, Text, Textarea, TextInput } from '@mantine/core'
import { useSession } from '../auth/auth'
import { CollectionPage, type ItemFormProps } from '../components/collection-page'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'
import { loginProvidersApi } from './providers-api'

/** Login providers of the active tenant: OpenID providers that log holders in before issuance. */
export default function LoginProvidersPage() {
  const session = useSession()
  const api = loginProvidersApi(session.api, session.activeTenant ?? '')
  return (
    <CollectionPage
      page="login-providers"
      noun="login provider"
      api={api}
      intro={
        <Text c="dimmed" size="sm">
          Register <code>{`${location.origin}/issuers/${session.activeTenant}/authorize/callback`}</code> as a
          redirect URI of the client at the provider.
        </Text>
      }
      columns={[
        { header: 'Issuer', cell: (provider) => <Text size="sm">{provider.issuer}</Text> },
        { header: 'Client id', cell: (provider) => provider.clientId },
        { header: 'Scopes', cell: (provider) => provider.scopes.join(' ') },
        {
          header: 'Client secret',
          cell: (provider) => (
            <Badge variant="light" color={provider.hasClientSecret ? 'teal.9' : 'gray.7'}>
              {provider.hasClientSecret ? 'stored' : 'public client'}
            </Badge>
          ),
        },
      ]}
      deleteMessage="Holders can no longer log in with it. The API refuses while a credential configuration names it."
      form={({ stored, onSaved }) => (
        <LoginProviderForm
          stored={stored}
          submit={(body) => (stored ? api.replace(stored.id, body) : api.create(body))}
          onSaved={onSaved}
        />
      )}
    />
  )
}

/** What happens to the stored client secret on a save. */
type SecretChange = 'keep' | 'set' | 'remove'

const FIELDS = ['id', 'description', 'issuer', 'clientId', 'scopes', 'clientSecret'] as const

function LoginProviderForm({ stored, submit, onSaved }: ItemFormProps<LoginProvider, LoginProviderInput>) {
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      id: stored?.id ?? '',
      description: stored?.description ?? '',
      issuer: stored?.issuer ?? '',
      clientId: stored?.clientId ?? '',
      scopes: stored?.scopes.join(' ') ?? 'openid',
      // A new provider: a secret when one is typed, else a public client.
      secretChange: (stored ? 'keep' : 'set') as SecretChange,
      clientSecret: '',
    },
    fields: FIELDS,
    schema: zLoginProviderInput,
    toBody: (values): LoginProviderInput => ({
      id: values.id.trim(),
      description: optional(values.description),
      issuer: values.issuer.trim(),
      clientId: values.clientId.trim(),
      scopes: values.scopes.split(/\s+/).filter(Boolean),
      // Left out: kept (replace) or none (create); null removes a stored one.
      clientSecret:
        values.secretChange === 'remove'
          ? null
          : values.secretChange === 'set'
            ? optional(values.clientSecret)
            : undefined,
    }),
    submit,
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Login provider">
      <Stack>
        <TextInput label="Id" required disabled={stored !== undefined} {...form.getInputProps('id')} />
        <Textarea label="Description" autosize minRows={2} {...form.getInputProps('description')} />
        <TextInput
          label="Issuer"
          required
          description="Its discovery document is read from <issuer>/.well-known/openid-configuration"
          {...form.getInputProps('issuer')}
        />
        <TextInput label="Client id" required {...form.getInputProps('clientId')} />
        <TextInput
          label="Scopes"
          description="Separated by spaces; openid is always asked for"
          {...form.getInputProps('scopes')}
        />
        {stored && (
          <Select
            label="Client secret"
            allowDeselect={false}
            data={[
              {
                value: 'keep',
                label: stored.hasClientSecret ? 'Keep the stored secret' : 'Keep: a public client',
              },
              { value: 'set', label: 'Set a new secret' },
              { value: 'remove', label: 'Remove it: a public client' },
            ]}
            {...form.getInputProps('secretChange')}
            // The API names the secret when the kept one would go to another provider.
            error={form.values.secretChange === 'set' ? undefined : form.errors.clientSecret}
          />
        )}
        {form.values.secretChange === 'set' && (
          <PasswordInput
            label={stored ? 'New client secret' : 'Client secret'}
            description="client_secret_basic; stored encrypted, never shown. Empty: a public client"
            {...form.getInputProps('clientSecret')}
          />
        )}
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save' : 'Create'}
        </Button>
      </Stack>
    </form>
  )
}
