import {
  type ClientCreate,
  type ClientUpdate,
  grantableRoles,
  type Role,
  zClientCreate,
  zClientUpdate,
} from '@credential-service/core-domain'
import type { Client, ClientWithSecret } from '@credential-service/sdk'
import {
  Button,
  Checkbox,
  PasswordInput,
  SimpleGrid,
  Stack,
  TagsInput,
  Textarea,
  TextInput,
} from '@mantine/core'
import type { UseFormReturnType } from '@mantine/form'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'

const FIELDS = [
  'clientId',
  'clientSecret',
  'description',
  'roles',
  'allowedIssuanceConfigs',
  'allowedPresentationConfigs',
] as const

/** What each role lets a client do (interface spec §5), as the checkboxes describe it. */
const ROLE_HINTS: Record<Role, string> = {
  'tenant:manage': 'operator: every tenant (operator clients only)',
  'tenant:read': 'read the tenant and its clients',
  'tenant:admin': 'manage the tenant and its clients',
  'issuance:offer': 'make offers, follow issuance sessions',
  'issuance:config': 'credential configurations and providers',
  'presentation:request': 'make presentation requests',
  'presentation:config': 'presentation configurations',
  'key:manage': 'create, rotate and delete key chains',
  'key:read': 'read key chains',
  'registrar:manage': 'registrar registrations and certificates',
  'metrics:read': 'read /api/metrics',
}

export function CreateClientForm({
  create,
  operatorScope,
  onCreated,
}: {
  create: (body: ClientCreate) => Promise<ClientWithSecret>
  /** An operator client (no tenant): the API requires `tenant:manage` of it. */
  operatorScope: boolean
  onCreated: (client: ClientWithSecret) => void
}) {
  const { form, onSubmit, pending } = useApiForm({
    success: 'Client created',
    initialValues: {
      clientId: '',
      clientSecret: '',
      description: '',
      roles: operatorScope ? ['tenant:manage'] : ([] as string[]),
      allowedIssuanceConfigs: [] as string[],
      allowedPresentationConfigs: [] as string[],
    },
    fields: FIELDS,
    schema: zClientCreate,
    toBody: (values): ClientCreate => ({
      clientId: optional(values.clientId),
      clientSecret: values.clientSecret === '' ? undefined : values.clientSecret,
      description: optional(values.description),
      ...accessOf(values),
    }),
    submit: create,
    onDone: onCreated,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <TextInput
          label="Client id"
          description="Generated when empty."
          {...form.getInputProps('clientId')}
        />
        <PasswordInput
          label="Client secret"
          description="At least 16 characters; generated when empty. Shown once after creation."
          autoComplete="new-password"
          {...form.getInputProps('clientSecret')}
        />
        {/* The rule asks whether the client has a tenant, not which: any id stands for one. */}
        <ClientFields form={form} grantable={grantableRoles(operatorScope ? undefined : 'tenant')} />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          Create client
        </Button>
      </Stack>
    </form>
  )
}

/** What create and edit share: roles and the configurations the client may use. */
interface AccessValues {
  description: string
  roles: string[]
  allowedIssuanceConfigs: string[]
  allowedPresentationConfigs: string[]
}

const accessOf = (values: AccessValues) => ({
  roles: values.roles as Role[],
  // Spec §5 rule 5: an empty list allows every configuration.
  allowedIssuanceConfigs: values.allowedIssuanceConfigs.length ? values.allowedIssuanceConfigs : null,
  allowedPresentationConfigs: values.allowedPresentationConfigs.length
    ? values.allowedPresentationConfigs
    : null,
})

/** `grantable`: the roles the API accepts for this client (core-domain grantableRoles). */
function ClientFields<Values extends AccessValues>({
  form,
  grantable,
}: {
  form: UseFormReturnType<Values>
  grantable: readonly Role[]
}) {
  return (
    <>
      <Textarea label="Description" autosize minRows={1} {...form.getInputProps('description')} />
      <Checkbox.Group label="Roles" withAsterisk {...form.getInputProps('roles')}>
        <SimpleGrid cols={{ base: 1, sm: 2 }} mt="xs">
          {grantable.map((role) => (
            <Checkbox key={role} value={role} label={role} description={ROLE_HINTS[role]} />
          ))}
        </SimpleGrid>
      </Checkbox.Group>
      <TagsInput
        label="Allowed issuance configurations"
        description="Credential configuration ids this client may offer; empty allows all. Enter to add."
        {...form.getInputProps('allowedIssuanceConfigs')}
      />
      <TagsInput
        label="Allowed presentation configurations"
        description="Presentation configuration ids this client may request; empty allows all."
        {...form.getInputProps('allowedPresentationConfigs')}
      />
    </>
  )
}

const EDIT_FIELDS = ['description', 'roles', 'allowedIssuanceConfigs', 'allowedPresentationConfigs'] as const

/**
 * A client's description, roles and allowed configurations (`PATCH`, spec §5); the secret is
 * rotated on its own. Tokens already issued keep their roles until they expire.
 */
export function EditClientForm({
  client,
  update,
  onSaved,
}: {
  client: Client
  update: (body: ClientUpdate) => Promise<Client>
  onSaved: (client: Client) => void
}) {
  const { form, onSubmit, pending } = useApiForm({
    success: 'Client saved',
    initialValues: {
      description: client.description ?? '',
      roles: [...client.roles] as string[],
      allowedIssuanceConfigs: client.allowedIssuanceConfigs ?? [],
      allowedPresentationConfigs: client.allowedPresentationConfigs ?? [],
    },
    fields: EDIT_FIELDS,
    schema: zClientUpdate,
    toBody: (values): ClientUpdate => ({
      description: optional(values.description) ?? null,
      ...accessOf(values),
    }),
    submit: update,
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <ClientFields form={form} grantable={grantableRoles(client.tenantId ?? undefined)} />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          Save client
        </Button>
      </Stack>
    </form>
  )
}
