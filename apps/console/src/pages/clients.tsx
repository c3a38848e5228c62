import type { Client, ClientWithSecret } from '@credential-service/sdk'
import { Badge, Button, Group, Modal, Stack, Table, Text, VisuallyHidden } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { ConfirmButton } from '../components/confirm-button'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { FilterCard, useSearch } from '../components/filter-card'
import { SecretOnce } from '../components/secret-once'
import { PageTitle } from '../components/shell'
import { CreateClientForm, EditClientForm } from './client-form'
import { clientsApi } from './clients-api'

const configList = (ids: string[] | null) => (ids && ids.length > 0 ? ids.join(', ') : 'any')

/** API clients of the active tenant (or the operator clients): list, create, rotate, delete. */
export default function ClientsPage() {
  const session = useSession()
  const queryClient = useQueryClient()
  const tenantId = session.activeTenant
  const clients = clientsApi(session.api, tenantId)
  const scopeKey = ['clients', tenantId ?? '(operator)']
  const pages = useCursorPages(scopeKey, clients.list)
  const search = useSearch(pages.query.data?.items)
  const [creating, { open, close }] = useDisclosure(false)
  const [secret, setSecret] = useState<ClientWithSecret>()
  const [editing, setEditing] = useState<Client>()
  const writable = canWrite(session, 'clients')
  const changed = () => {
    pages.reset()
    return queryClient.invalidateQueries({ queryKey: scopeKey })
  }
  return (
    <Stack>
      <PageTitle title={tenantId ? `API clients of ${tenantId}` : 'Operator clients'}>
        {writable && <Button onClick={open}>Create client</Button>}
      </PageTitle>
      {!tenantId && (
        <Text c="dimmed">
          Clients bound to no tenant, with <code>tenant:manage</code>. Pick a tenant to see its clients.
        </Text>
      )}
      <FilterCard label="Search clients" search={search} />
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Client id</Table.Th>
            <Table.Th>Roles</Table.Th>
            <Table.Th>Issuance configurations</Table.Th>
            <Table.Th>Presentation configurations</Table.Th>
            <Table.Th>Secret rotated</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {search.items.map((client) => (
            <Table.Tr key={client.clientId}>
              <Table.Td>
                <Text size="sm">{client.clientId}</Text>
                {client.description && (
                  <Text size="xs" c="dimmed">
                    {client.description}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Group gap={4}>
                  {client.roles.map((role) => (
                    <Badge key={role} variant="light" size="sm">
                      {role}
                    </Badge>
                  ))}
                </Group>
              </Table.Td>
              <Table.Td>{configList(client.allowedIssuanceConfigs)}</Table.Td>
              <Table.Td>{configList(client.allowedPresentationConfigs)}</Table.Td>
              <Table.Td>{new Date(client.secretRotatedAt).toLocaleString()}</Table.Td>
              <Table.Td>
                {writable && (
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="xs"
                      variant="default"
                      aria-label={`Edit client ${client.clientId}`}
                      onClick={() => setEditing(client)}
                    >
                      Edit
                    </Button>
                    <ConfirmButton
                      label="Rotate secret"
                      color="blue"
                      aria-label={`Rotate secret of ${client.clientId}`}
                      title={`Rotate the secret of ${client.clientId}?`}
                      message="A new secret is made and shown once; the old one stops working at once. Tokens already issued stay valid until they expire."
                      onConfirm={async () => setSecret(await clients.rotate(client.clientId, {}))}
                      onDone={() => void changed()}
                    />
                    <ConfirmButton
                      label="Delete"
                      aria-label={`Delete client ${client.clientId}`}
                      title={`Delete client ${client.clientId}?`}
                      message="The client can no longer get tokens. This cannot be undone."
                      onConfirm={() => clients.remove(client.clientId)}
                      onDone={() => void changed()}
                    />
                  </Group>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No client yet.</Text>}
      <PagerBar pages={pages} label="clients" />
      <Modal opened={creating} onClose={close} title="Create client" size="lg">
        <CreateClientForm
          create={clients.create}
          operatorScope={!tenantId}
          onCreated={(created) => {
            close()
            setSecret(created)
            void changed()
          }}
        />
      </Modal>
      <Modal
        opened={editing !== undefined}
        onClose={() => setEditing(undefined)}
        title={`Edit client ${editing?.clientId ?? ''}`}
        size="lg"
      >
        {editing && (
          <EditClientForm
            client={editing}
            update={(body) => clients.update(editing.clientId, body)}
            onSaved={() => {
              setEditing(undefined)
              void changed()
            }}
          />
        )}
      </Modal>
      <SecretOnce
        clientId={secret?.clientId ?? ''}
        secret={secret?.clientSecret}
        onClose={() => setSecret(undefined)}
      />
    </Stack>
  )
}
