import { credentialTypeOf } from '@credential-service/core-domain'
import { Anchor, Badge, Button, Group, Stack, Table, Text, VisuallyHidden } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { Link } from 'react-router'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { ConfirmButton } from '../components/confirm-button'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { downloadText } from '../components/download'
import { FilterCard, useSearch } from '../components/filter-card'
import { PageTitle } from '../components/shell'
import { configFile } from '../credential-configs/config-file'
import { credentialConfigsApi } from './configs-api'

/** Credential configurations of the active tenant: list, export, delete; the editor creates and edits. */
export default function CredentialConfigsPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const configs = credentialConfigsApi(session.api, tenantId)
  const queryClient = useQueryClient()
  const scopeKey = ['credential-configs', tenantId]
  const pages = useCursorPages(scopeKey, configs.list)
  const search = useSearch(pages.query.data?.items)
  const writable = canWrite(session, 'credential-configs')
  return (
    <Stack>
      <PageTitle title={`Credential configurations of ${tenantId}`}>
        {writable && (
          <Button component={Link} to="/credential-configs/new">
            New credential configuration
          </Button>
        )}
      </PageTitle>
      <FilterCard label="Search credential configurations" search={search} />
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Id</Table.Th>
            <Table.Th>Format</Table.Th>
            <Table.Th>Type</Table.Th>
            <Table.Th>Fields</Table.Th>
            <Table.Th>Key chain</Table.Th>
            <Table.Th>Updated</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {search.items.map((config) => (
            <Table.Tr key={config.id}>
              <Table.Td>
                <Anchor component={Link} to={`/credential-configs/${encodeURIComponent(config.id)}/edit`}>
                  {config.id}
                </Anchor>
                {config.description && (
                  <Text size="xs" c="dimmed">
                    {config.description}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Badge variant="light">{config.config.format}</Badge>
              </Table.Td>
              <Table.Td>
                <Text size="sm">{credentialTypeOf(config.config)}</Text>
              </Table.Td>
              <Table.Td>{config.fields.length}</Table.Td>
              <Table.Td>{config.keyChainId}</Table.Td>
              <Table.Td>{new Date(config.updatedAt).toLocaleString()}</Table.Td>
              <Table.Td>
                <Group gap="xs" justify="flex-end" wrap="nowrap">
                  <Button
                    variant="default"
                    size="xs"
                    aria-label={`Export ${config.id}`}
                    onClick={() => {
                      const file = configFile(config)
                      downloadText(file.fileName, file.text, 'application/json')
                    }}
                  >
                    Export
                  </Button>
                  {writable && (
                    <ConfirmButton
                      label="Delete"
                      aria-label={`Delete ${config.id}`}
                      title={`Delete credential configuration ${config.id}?`}
                      message="Wallets can no longer obtain this credential, and offers for it can no longer be made. Credentials already issued stay valid."
                      onConfirm={() => configs.remove(config.id)}
                      onDone={() => {
                        pages.reset()
                        void queryClient.invalidateQueries({ queryKey: scopeKey })
                      }}
                    />
                  )}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No credential configuration yet.</Text>}
      <PagerBar pages={pages} label="credential configurations" />
    </Stack>
  )
}
