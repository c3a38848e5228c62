import { type DcqlCredentialQuery, queriedTypes } from '@credential-service/core-domain'
import { Anchor, Button, Group, Stack, Table, Text, VisuallyHidden } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { Link } from 'react-router'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { ConfirmButton } from '../components/confirm-button'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { FilterCard, useSearch } from '../components/filter-card'
import { PageTitle } from '../components/shell'
import { presentationConfigsApi } from './configs-api'

/** What a presentation configuration asks for, in a line: each credential query's type. */
const asksFor = (query: { credentials: DcqlCredentialQuery[] }) =>
  query.credentials.map((credential) => queriedTypes(credential)?.join(' or ')).join(', ')

/** Presentation configurations of the active tenant: list and delete; the editor creates and edits. */
export default function PresentationConfigsPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const presentations = presentationConfigsApi(session.api, tenantId)
  const queryClient = useQueryClient()
  const pages = useCursorPages(['presentation-configs', tenantId], presentations.list)
  const search = useSearch(pages.query.data?.items)
  const writable = canWrite(session, 'presentation-configs')
  return (
    <Stack>
      <PageTitle title={`Presentation configurations of ${tenantId}`}>
        {writable && (
          <Button component={Link} to="/presentation-configs/new">
            New presentation configuration
          </Button>
        )}
      </PageTitle>
      <FilterCard label="Search presentation configurations" search={search} />
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Id</Table.Th>
            <Table.Th>Asks for</Table.Th>
            <Table.Th>Response mode</Table.Th>
            <Table.Th>Key chain</Table.Th>
            <Table.Th>Updated</Table.Th>
            <Table.Th>
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {search.items.map((presentation) => (
            <Table.Tr key={presentation.id}>
              <Table.Td>
                <Anchor
                  component={Link}
                  to={`/presentation-configs/${encodeURIComponent(presentation.id)}/edit`}
                >
                  {presentation.id}
                </Anchor>
                {presentation.description && (
                  <Text size="xs" c="dimmed">
                    {presentation.description}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{asksFor(presentation.dcqlQuery)}</Table.Td>
              <Table.Td>{presentation.responseMode}</Table.Td>
              <Table.Td>{presentation.keyChainId}</Table.Td>
              <Table.Td>{new Date(presentation.updatedAt).toLocaleString()}</Table.Td>
              <Table.Td>
                <Group justify="flex-end">
                  {writable && (
                    <ConfirmButton
                      label="Delete"
                      title={`Delete presentation configuration ${presentation.id}?`}
                      message="Requests can no longer be made with it; pending requests made with it fail."
                      onConfirm={() => presentations.remove(presentation.id)}
                      onDone={() => {
                        pages.reset()
                        void queryClient.invalidateQueries({ queryKey: ['presentation-configs', tenantId] })
                      }}
                    />
                  )}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No presentation configuration yet.</Text>}
      <PagerBar pages={pages} label="presentation configurations" />
    </Stack>
  )
}
