import { type RegistrarConfigInput, zRegistrarConfigInput } from '@credential-service/core-domain'
import { ManagementApiError, type RegistrarConfig } from '@credential-service/sdk'
import { Alert, Button, PasswordInput, SimpleGrid, Stack, Text, TextInput } from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { ConfirmButton } from '../components/confirm-button'
import { FieldTable } from '../components/field-table'
import { FormAlert } from '../components/form-alert'
import { SectionCard } from '../components/section-card'
import { PageTitle } from '../components/shell'
import { describeError } from '../forms/problems'
import { optional, useApiForm } from '../forms/use-api-form'
import { AccessCertificateForm, RegistrationCertificateForm, RelyingPartyForm } from './registrar-forms'

/**
 * The tenant's national registrar (docs/registrar.md): the connection (get, put, delete), the
 * registration as relying party, access and registration certificates.
 */
export default function RegistrarPage() {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const queryClient = useQueryClient()
  const key = ['registrar', tenantId]
  const connection = useQuery({
    queryKey: key,
    // No connection yet is a 404: shown as "not connected", not as a failure.
    queryFn: async () => {
      try {
        return await api.getRegistrarConfigOfTenant(tenantId)
      } catch (error) {
        if (error instanceof ManagementApiError && error.status === 404) return null
        throw error
      }
    },
  })
  const saved = (config: RegistrarConfig | null) => queryClient.setQueryData(key, config)
  const current = connection.data
  return (
    <Stack>
      <PageTitle title={`Registrar of ${tenantId}`} />
      {connection.isPending && <Busy label="Loading the registrar connection" />}
      {connection.isError && (
        <Alert color="red" title="Could not load the registrar connection" role="alert">
          {describeError(connection.error)}
        </Alert>
      )}
      {current !== undefined && (
        <SimpleGrid cols={{ base: 1, lg: 2 }}>
          <SectionCard title="Connection">
            {current ? (
              <ConnectionTable config={current} />
            ) : (
              <Text data-testid="registrar-status">Not connected to a registrar.</Text>
            )}
            <ConnectionForm key={current?.updatedAt ?? 'new'} stored={current} onSaved={saved} />
            {current && (
              <ConfirmButton
                label="Delete connection"
                title="Delete the registrar connection?"
                message="The connection and its stored client secret are deleted; certificates already stored stay."
                onConfirm={() => api.deleteRegistrarConfigOfTenant(tenantId)}
                onDone={() => saved(null)}
              />
            )}
          </SectionCard>
          {current && (
            <SectionCard title="Registration">
              <RelyingPartyForm onSaved={saved} />
            </SectionCard>
          )}
          {current && (
            <SectionCard title="Access certificate">
              <AccessCertificateForm />
            </SectionCard>
          )}
          {current && (
            <SectionCard title="Registration certificate">
              <RegistrationCertificateForm />
            </SectionCard>
          )}
        </SimpleGrid>
      )}
    </Stack>
  )
}

function ConnectionTable({ config }: { config: RegistrarConfig }) {
  const party = config.relyingParty
  const rows: [string, string][] = [
    ['Base URL', config.baseUrl],
    ['Token URL', config.tokenUrl],
    ['Client id', config.clientId],
    [
      'Registered as',
      party
        ? `${party.name} (${party.id}): ${party.roles.join(', ')}, ${new Date(party.registeredAt).toLocaleString()}`
        : 'not registered',
    ],
    ['Updated', new Date(config.updatedAt).toLocaleString()],
  ]
  return <FieldTable label="Registrar connection" testId="registrar-status" rows={rows} />
}

/** PUT: create or replace the connection; the client secret is never shown, left empty it is kept. */
function ConnectionForm({
  stored,
  onSaved,
}: {
  stored: RegistrarConfig | null
  onSaved: (config: RegistrarConfig) => void
}) {
  const { api, activeTenant } = useSession()
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      baseUrl: stored?.baseUrl ?? '',
      tokenUrl: stored?.tokenUrl ?? '',
      clientId: stored?.clientId ?? '',
      clientSecret: '',
    },
    fields: ['baseUrl', 'tokenUrl', 'clientId', 'clientSecret'],
    schema: zRegistrarConfigInput,
    toBody: (values): RegistrarConfigInput => ({
      baseUrl: values.baseUrl.trim(),
      tokenUrl: values.tokenUrl.trim(),
      clientId: values.clientId.trim(),
      clientSecret: optional(values.clientSecret),
    }),
    submit: (body) => api.putRegistrarConfigOfTenant(activeTenant ?? '', body),
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Registrar connection">
      <Stack gap="xs">
        <TextInput
          label="Base URL"
          required
          description="The registrar's API, e.g. https://registrar.example.eu/api"
          {...form.getInputProps('baseUrl')}
        />
        <TextInput
          label="Token URL"
          required
          description="Its OAuth 2.0 token endpoint (client credentials)"
          {...form.getInputProps('tokenUrl')}
        />
        <TextInput label="Registrar client id" required {...form.getInputProps('clientId')} />
        <PasswordInput
          label="Registrar client secret"
          required={!stored}
          description={
            stored ? 'Stored encrypted; empty: the stored one is kept' : 'Stored encrypted, never shown'
          }
          {...form.getInputProps('clientSecret')}
        />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save connection' : 'Connect'}
        </Button>
      </Stack>
    </form>
  )
}
