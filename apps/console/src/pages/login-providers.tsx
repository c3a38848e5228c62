import { type LoginProviderInput, zLoginProviderInput } from '@credential-service/core-domain'
import type { LoginProvider } from '@credential-service/sdk'
import {
  Autocomplete,
  Badge,
  Button,
  SegmentedControl,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core'
import { canRead } from '../access'
import { useSession } from '../auth/auth'
import {
  ClientSecretFields,
  type SecretChange,
  StoredSecretBadge,
  secretOfChange,
} from '../components/client-secret-fields'
import { CollectionPage, type ItemFormProps } from '../components/collection-page'
import { FormAlert } from '../components/form-alert'
import { useReferenceIds } from '../components/reference-ids'
import { optional, useApiForm } from '../forms/use-api-form'
import { loginProvidersApi } from './providers-api'

/**
 * Login providers of the active tenant: what logs holders in before issuance, an upstream OpenID
 * provider or a presentation of another credential (a PID, issue 26).
 */
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
          redirect URI of the client at the provider. A provider of kind presentation needs none: /authorize
          shows the holder the presentation request as a QR code and a same-device link.
        </Text>
      }
      columns={[
        {
          header: 'Kind',
          cell: (provider) => (
            <Badge variant="light" color={provider.kind === 'presentation' ? 'grape.9' : 'blue.9'}>
              {provider.kind}
            </Badge>
          ),
        },
        {
          header: 'Issuer or presentation',
          cell: (provider) => (
            <Text size="sm">
              {provider.kind === 'presentation' ? provider.presentationConfigId : provider.issuer}
            </Text>
          ),
        },
        { header: 'Client id', cell: (provider) => provider.clientId ?? '' },
        {
          header: 'Scopes',
          cell: (provider) => (provider.kind === 'openid' ? provider.scopes.join(' ') : ''),
        },
        {
          header: 'Client secret',
          cell: (provider) =>
            provider.kind === 'openid' ? (
              <StoredSecretBadge stored={provider.hasClientSecret} without="public client" />
            ) : null,
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

type Kind = 'openid' | 'presentation'

const FIELDS = [
  'id',
  'description',
  'kind',
  'issuer',
  'clientId',
  'scopes',
  'clientSecret',
  'presentationConfigId',
] as const

export function LoginProviderForm({
  stored,
  submit,
  onSaved,
}: ItemFormProps<LoginProvider, LoginProviderInput>) {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const readable = canRead(session, 'presentation-configs')
  const listed = useReferenceIds(
    ['presentation-configs', tenantId],
    (query) => session.api.listPresentationConfigsOfTenant(tenantId, query),
    readable,
  )
  // The stored one stays selectable even when it is not among the first listed.
  const presentations = [
    ...new Set([...listed, ...(stored?.presentationConfigId ? [stored.presentationConfigId] : [])]),
  ]
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      id: stored?.id ?? '',
      description: stored?.description ?? '',
      kind: (stored?.kind ?? 'openid') as Kind,
      presentationConfigId: stored?.presentationConfigId ?? '',
      issuer: stored?.issuer ?? '',
      clientId: stored?.clientId ?? '',
      scopes: stored?.scopes.join(' ') ?? 'openid',
      // A new provider: a secret when one is typed, else a public client.
      secretChange: (stored ? 'keep' : 'set') as SecretChange,
      clientSecret: '',
    },
    fields: FIELDS,
    schema: zLoginProviderInput,
    toBody: (values): LoginProviderInput =>
      values.kind === 'presentation'
        ? {
            id: values.id.trim(),
            description: optional(values.description),
            kind: 'presentation',
            presentationConfigId: values.presentationConfigId.trim(),
            scopes: values.scopes.split(/\s+/).filter(Boolean),
            // A provider switched from openid drops its secret: a presentation has none.
            ...(stored?.hasClientSecret ? { clientSecret: null } : {}),
          }
        : {
            id: values.id.trim(),
            kind: 'openid',
            description: optional(values.description),
            issuer: values.issuer.trim(),
            clientId: values.clientId.trim(),
            scopes: values.scopes.split(/\s+/).filter(Boolean),
            // Left out: kept (replace) or none (create); null removes a stored one.
            clientSecret: secretOfChange(values.secretChange, values.clientSecret),
          },
    submit,
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Login provider">
      <Stack>
        <TextInput label="Id" required disabled={stored !== undefined} {...form.getInputProps('id')} />
        <Textarea label="Description" autosize minRows={2} {...form.getInputProps('description')} />
        <Stack gap={4}>
          <Text size="sm" fw={500} id="login-provider-kind">
            Kind
          </Text>
          <SegmentedControl
            aria-labelledby="login-provider-kind"
            data={[
              { value: 'openid', label: 'OpenID provider' },
              { value: 'presentation', label: 'Presentation' },
            ]}
            {...form.getInputProps('kind')}
          />
        </Stack>
        {form.values.kind === 'presentation' ? (
          <PresentationFields form={form} presentations={presentations} readable={readable} />
        ) : (
          <>
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
            <ClientSecretFields
              form={form}
              stored={stored}
              without="a public client"
              description="client_secret_basic; stored encrypted, never shown. Empty: a public client"
            />
          </>
        )}
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save' : 'Create'}
        </Button>
      </Stack>
    </form>
  )
}

/**
 * Kind `presentation`: the presentation configuration whose DCQL query the holder answers (its trust
 * decides which issuers count). A select of the tenant's configurations, typed when they cannot be
 * listed.
 */
function PresentationFields({
  form,
  presentations,
  readable,
}: {
  // biome-ignore lint/suspicious/noExplicitAny: the form's values type is the page's own
  form: { getInputProps(path: string): any }
  presentations: string[]
  readable: boolean
}) {
  const description =
    'The holder presents a credential as this configuration asks; its claims fill the credential configurations that name this provider'
  return readable ? (
    <Select
      label="Presentation configuration"
      required
      searchable
      allowDeselect={false}
      description={description}
      data={presentations}
      {...form.getInputProps('presentationConfigId')}
    />
  ) : (
    <Autocomplete
      label="Presentation configuration"
      required
      description={description}
      data={presentations}
      {...form.getInputProps('presentationConfigId')}
    />
  )
}
