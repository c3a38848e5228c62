import {
  type TenantCreate,
  type TenantUpdate,
  zTenantCreate,
  zTenantUpdate,
} from '@credential-service/core-domain'
import type { Tenant } from '@credential-service/sdk'
import {
  Button,
  Group,
  Modal,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  VisuallyHidden,
} from '@mantine/core'
import type { UseFormReturnType } from '@mantine/form'
import { useDisclosure } from '@mantine/hooks'
import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { canWrite } from '../access'
import { useAuth, useSession } from '../auth/auth'
import { ConfirmButton } from '../components/confirm-button'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { FilterCard, useSearch } from '../components/filter-card'
import { FormAlert } from '../components/form-alert'
import { PageTitle } from '../components/shell'
import { optional, useApiForm } from '../forms/use-api-form'

/** Tenants (`/api/tenants`): operators list, create, edit and delete them; `tenant:read` sees its own. */
export default function TenantsPage() {
  const session = useSession()
  const { pickTenant } = useAuth()
  const queryClient = useQueryClient()
  const pages = useCursorPages(['tenants'], (query) => session.api.listTenants(query))
  const search = useSearch(pages.query.data?.items)
  const [creating, { open, close }] = useDisclosure(false)
  const [editing, setEditing] = useState<Tenant>()
  const writable = canWrite(session, 'tenants')
  const changed = () => {
    pages.reset()
    return queryClient.invalidateQueries({ queryKey: ['tenants'] })
  }
  return (
    <Stack>
      <PageTitle title="Tenants">{writable && <Button onClick={open}>Create tenant</Button>}</PageTitle>
      <FilterCard label="Search tenants" search={search} />
      <Table striped highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Id</Table.Th>
            <Table.Th>Name</Table.Th>
            <Table.Th>Country</Table.Th>
            <Table.Th>Credential encryption</Table.Th>
            <Table.Th>Presentation results</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {search.items.map((tenant) => (
            <Table.Tr key={tenant.id}>
              <Table.Td>{tenant.id}</Table.Td>
              <Table.Td>{tenant.name}</Table.Td>
              <Table.Td>{tenant.country ?? ''}</Table.Td>
              <Table.Td>{tenant.credentialEncryption}</Table.Td>
              <Table.Td>{tenant.presentationRetention}</Table.Td>
              <Table.Td>{new Date(tenant.createdAt).toLocaleString()}</Table.Td>
              <Table.Td>
                {writable && (
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      variant="default"
                      aria-label={`Edit tenant ${tenant.id}`}
                      onClick={() => setEditing(tenant)}
                    >
                      Edit
                    </Button>
                    <ConfirmButton
                      label="Delete"
                      aria-label={`Delete tenant ${tenant.id}`}
                      title={`Delete tenant ${tenant.id}?`}
                      message={`Tenant ${tenant.name} and everything it owns (clients, key chains, configurations, sessions) are deleted. This cannot be undone.`}
                      onConfirm={() => session.api.deleteTenant(tenant.id)}
                      onDone={() => {
                        if (session.activeTenant === tenant.id) pickTenant(undefined)
                        void changed()
                      }}
                    />
                  </Group>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No tenant yet.</Text>}
      <PagerBar pages={pages} label="tenants" />
      <Modal opened={creating} onClose={close} title="Create tenant">
        <CreateTenantForm
          onCreated={(tenant) => {
            close()
            pickTenant(tenant.id)
            void changed()
          }}
        />
      </Modal>
      <Modal
        opened={editing !== undefined}
        onClose={() => setEditing(undefined)}
        title={`Edit tenant ${editing?.id ?? ''}`}
      >
        {editing && (
          <EditTenantForm
            tenant={editing}
            onSaved={() => {
              setEditing(undefined)
              void changed()
            }}
          />
        )}
      </Modal>
    </Stack>
  )
}

const FIELDS = [
  'id',
  'name',
  'description',
  'country',
  'presentationRetention',
  'credentialEncryption',
] as const

function CreateTenantForm({ onCreated }: { onCreated: (tenant: Tenant) => void }) {
  const { api } = useSession()
  const { form, onSubmit, pending } = useApiForm({
    success: 'Tenant created',
    initialValues: {
      id: '',
      name: '',
      description: '',
      country: '',
      presentationRetention: 'keep',
      credentialEncryption: 'optional',
    },
    fields: FIELDS,
    schema: zTenantCreate,
    toBody: (values): TenantCreate => ({
      id: optional(values.id),
      name: values.name.trim(),
      description: optional(values.description),
      country: optional(values.country)?.toUpperCase(),
      ...settingsOf(values),
    }),
    submit: (body) => api.createTenant(body),
    onDone: onCreated,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <TextInput
          label="Id"
          description="Lowercase letters, digits, - and _; used in URLs. Generated when empty."
          {...form.getInputProps('id')}
        />
        <TenantFields form={form} />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          Create tenant
        </Button>
      </Stack>
    </form>
  )
}

interface SettingsValues {
  name: string
  description: string
  country: string
  presentationRetention: string
  credentialEncryption: string
}

/** Name, description and the tenant's settings: what create and edit share. */
function TenantFields<Values extends SettingsValues>({ form }: { form: UseFormReturnType<Values> }) {
  return (
    <>
      <TextInput label="Name" required {...form.getInputProps('name')} />
      <Textarea label="Description" autosize minRows={2} {...form.getInputProps('description')} />
      <TextInput
        label="Country"
        description="ISO 3166-1 alpha-2, e.g. DE: the default key chain names it (C=), as mso_mdoc requires"
        maxLength={2}
        {...form.getInputProps('country')}
      />
      <Select
        label="Presentation results"
        data={[
          { value: 'keep', label: 'Keep on the session' },
          { value: 'drop-after-delivery', label: 'Drop once the webhook has them' },
        ]}
        allowDeselect={false}
        {...form.getInputProps('presentationRetention')}
      />
      <Select
        label="Credential encryption"
        data={[
          { value: 'optional', label: 'Offered to wallets' },
          { value: 'required', label: 'Required of wallets' },
        ]}
        allowDeselect={false}
        {...form.getInputProps('credentialEncryption')}
      />
    </>
  )
}

const settingsOf = (values: SettingsValues) => ({
  presentationRetention: values.presentationRetention as TenantUpdate['presentationRetention'],
  credentialEncryption: values.credentialEncryption as TenantUpdate['credentialEncryption'],
})

/** `PATCH /api/tenants/{id}`: the id stays; the name, description and settings change. */
function EditTenantForm({ tenant, onSaved }: { tenant: Tenant; onSaved: (tenant: Tenant) => void }) {
  const { api } = useSession()
  const { form, onSubmit, pending } = useApiForm({
    success: 'Tenant saved',
    initialValues: {
      name: tenant.name,
      description: tenant.description ?? '',
      country: tenant.country ?? '',
      presentationRetention: tenant.presentationRetention as string,
      credentialEncryption: tenant.credentialEncryption as string,
    },
    fields: FIELDS,
    schema: zTenantUpdate,
    toBody: (values): TenantUpdate => ({
      name: values.name.trim(),
      description: optional(values.description) ?? null,
      country: optional(values.country)?.toUpperCase() ?? null,
      ...settingsOf(values),
    }),
    submit: (body) => api.updateTenant(tenant.id, body),
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <TenantFields form={form} />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          Save tenant
        </Button>
      </Stack>
    </form>
  )
}
