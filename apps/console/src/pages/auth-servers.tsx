import {
  type AuthServerClaimsSource,
  type AuthServerInput,
  type AuthServerMapping,
  type AuthServerTokenCheck,
  zAuthServerInput,
} from '@credential-service/core-domain'
import type { AuthServer } from '@credential-service/sdk'
import {
  Badge,
  Button,
  Checkbox,
  Group,
  MultiSelect,
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
import { authServersApi } from './providers-api'

/**
 * External authorization servers of the active tenant (issue 41, OpenID4VCI 1.0 §12.2.4): OAuth
 * servers the customer runs, whose access tokens the credential endpoint accepts.
 */
export default function AuthServersPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const api = authServersApi(session.api, tenantId)
  return (
    <CollectionPage
      page="auth-servers"
      noun="authorization server"
      api={api}
      intro={
        <Text c="dimmed" size="sm">
          The issuer metadata lists them in <code>authorization_servers</code>. Their access tokens must name{' '}
          <code>{`${location.origin}/issuers/${tenantId}`}</code> in <code>aud</code>.
        </Text>
      }
      columns={[
        { header: 'Issuer', cell: (server) => <Text size="sm">{server.issuer}</Text> },
        {
          header: 'Token check',
          cell: (server) => <Badge variant="light">{server.tokenCheck}</Badge>,
        },
        { header: 'Configurations', cell: (server) => server.credentialConfigurationIds.join(', ') },
        { header: 'Claims from', cell: (server) => server.claimsSource },
        {
          header: 'Client secret',
          cell: (server) =>
            server.tokenCheck === 'introspection' ? (
              <StoredSecretBadge stored={server.hasClientSecret} without="none" />
            ) : null,
        },
      ]}
      deleteMessage="Its tokens are refused at once; sessions it started keep their state."
      form={({ stored, onSaved }) => (
        <AuthServerForm
          stored={stored}
          submit={(body) => (stored ? api.replace(stored.id, body) : api.create(body))}
          onSaved={onSaved}
        />
      )}
    />
  )
}

const FIELDS = [
  'id',
  'description',
  'issuer',
  'tokenCheck',
  'clientId',
  'clientSecret',
  'credentialConfigurationIds',
  'mapping',
  'claimsSource',
  'singleUseTokens',
] as const

const MAPPING_LABELS: Record<AuthServerMapping, string> = {
  authorization_details: 'authorization_details of type openid_credential',
  scope: "scope (each configuration's scope)",
}

function AuthServerForm({ stored, submit, onSaved }: ItemFormProps<AuthServer, AuthServerInput>) {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const configs = useReferenceIds(
    ['credential-configs', tenantId],
    (query) => session.api.listCredentialConfigsOfTenant(tenantId, query),
    canRead(session, 'credential-configs'),
  )
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      id: stored?.id ?? '',
      description: stored?.description ?? '',
      issuer: stored?.issuer ?? '',
      tokenCheck: (stored?.tokenCheck ?? 'jwt') as AuthServerTokenCheck,
      clientId: stored?.clientId ?? '',
      secretChange: (stored ? 'keep' : 'set') as SecretChange,
      clientSecret: '',
      credentialConfigurationIds: [...(stored?.credentialConfigurationIds ?? [])],
      mapping: [...(stored?.mapping ?? ['authorization_details', 'scope'])] as string[],
      claimsSource: (stored?.claimsSource ?? 'token') as AuthServerClaimsSource,
      singleUseTokens: stored?.singleUseTokens ?? false,
    },
    fields: FIELDS,
    schema: zAuthServerInput,
    toBody: (values): AuthServerInput => ({
      id: values.id.trim(),
      description: optional(values.description),
      issuer: values.issuer.trim(),
      tokenCheck: values.tokenCheck,
      credentialConfigurationIds: [...values.credentialConfigurationIds],
      mapping: values.mapping as AuthServerMapping[],
      claimsSource: values.claimsSource,
      singleUseTokens: values.singleUseTokens,
      // A JWT server needs neither; saved as jwt, a stored secret is dropped.
      ...(values.tokenCheck === 'introspection'
        ? {
            clientId: optional(values.clientId),
            clientSecret: secretOfChange(values.secretChange, values.clientSecret),
          }
        : {}),
    }),
    submit,
    onDone: onSaved,
  })
  const introspection = form.values.tokenCheck === 'introspection'
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Authorization server">
      <Stack>
        <TextInput label="Id" required disabled={stored !== undefined} {...form.getInputProps('id')} />
        <Textarea label="Description" autosize minRows={2} {...form.getInputProps('description')} />
        <TextInput
          label="Issuer"
          required
          description="Its RFC 8414 metadata (or openid-configuration) must name this issuer"
          {...form.getInputProps('issuer')}
        />
        <Stack gap={4}>
          <Text size="sm" fw={500} id="auth-server-token-check">
            Token check
          </Text>
          <SegmentedControl
            aria-labelledby="auth-server-token-check"
            data={[
              { value: 'jwt', label: 'JWT access tokens (RFC 9068)' },
              { value: 'introspection', label: 'Introspection (RFC 7662)' },
            ]}
            {...form.getInputProps('tokenCheck')}
          />
        </Stack>
        {introspection && (
          <>
            <TextInput
              label="Client id"
              required
              description="Our client at the server's introspection endpoint"
              {...form.getInputProps('clientId')}
            />
            <ClientSecretFields
              form={form}
              stored={stored}
              without="no secret"
              description="client_secret_basic; stored encrypted, never shown"
            />
          </>
        )}
        <MultiSelect
          label="Credential configurations"
          description="The configurations this server may authorise; a token naming another is refused"
          required
          placeholder={form.values.credentialConfigurationIds.length ? undefined : 'None'}
          // The stored ids stay choosable when the list is longer than a page.
          data={[...new Set([...configs, ...form.values.credentialConfigurationIds])]}
          searchable
          {...form.getInputProps('credentialConfigurationIds')}
        />
        <Checkbox.Group
          label="Configurations named by"
          description="What of a token names the configurations it authorises"
          required
          {...form.getInputProps('mapping')}
        >
          <Group mt={4}>
            {(Object.keys(MAPPING_LABELS) as AuthServerMapping[]).map((mapping) => (
              <Checkbox key={mapping} value={mapping} label={MAPPING_LABELS[mapping]} />
            ))}
          </Group>
        </Checkbox.Group>
        <Select
          label="Claims from"
          description="Without an offer bound through issuer_state; a bound offer issues its own claims"
          allowDeselect={false}
          data={[
            { value: 'token', label: "The token's claims" },
            { value: 'attribute-provider', label: "The configuration's attribute provider" },
          ]}
          {...form.getInputProps('claimsSource')}
        />
        <Checkbox
          label="Single-use tokens: a token is good for one credential request"
          {...form.getInputProps('singleUseTokens', { type: 'checkbox' })}
        />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save' : 'Create'}
        </Button>
      </Stack>
    </form>
  )
}
