import { Alert, Badge, Stack, Table } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { PageTitle } from '../components/shell'
import { describeError } from '../forms/problems'

/** `GET /api/health`: status, version and the database (no role needed). */
export default function HealthPage() {
  const { api } = useSession()
  const health = useQuery({ queryKey: ['health'], queryFn: () => api.getHealth(), refetchInterval: 10_000 })
  return (
    <Stack>
      <PageTitle title="Health and version" />
      {health.isPending && <Busy label="Loading the health" />}
      {health.isError && (
        <Alert color="red" title="The service is not healthy" role="alert">
          {describeError(health.error)}
        </Alert>
      )}
      {health.data && (
        <Table w="auto" variant="vertical">
          <Table.Tbody>
            <Table.Tr>
              <Table.Th>Status</Table.Th>
              <Table.Td>
                <Badge color={health.data.status === 'ok' ? 'teal.9' : 'red.9'}>{health.data.status}</Badge>
              </Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Version</Table.Th>
              <Table.Td data-testid="service-version">{health.data.version}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th>Database</Table.Th>
              <Table.Td>
                {health.data.database.kind}, {health.data.database.status}
              </Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  )
}
