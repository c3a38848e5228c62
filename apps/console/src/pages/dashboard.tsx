import type { SessionStats } from '@credential-service/sdk'
import { Alert, Card, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { PageTitle } from '../components/shell'
import { describeError } from '../forms/problems'

const HOUR_MS = 60 * 60 * 1000
const WINDOWS = [
  { value: '24', label: 'Last 24 hours' },
  { value: '168', label: 'Last 7 days' },
]

/**
 * The first page after sign-in: issued, verified and failed per configuration over a window,
 * counted from the database by `GET .../session-stats` (the metrics are per process).
 */
export default function DashboardPage() {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const [hours, setHours] = useState('24')
  const stats = useQuery({
    queryKey: ['session-stats', tenantId, hours],
    queryFn: () =>
      api.getSessionStatsOfTenant(tenantId, {
        since: new Date(Date.now() - Number(hours) * HOUR_MS).toISOString(),
      }),
    refetchInterval: 30_000,
  })
  return (
    <Stack>
      <PageTitle title={`Dashboard of ${tenantId}`}>
        <SegmentedControl aria-label="Window" data={WINDOWS} value={hours} onChange={setHours} />
      </PageTitle>
      {stats.isPending && <Busy label="Counting the sessions" />}
      {stats.isError && (
        <Alert color="red" title="No counts" role="alert">
          {describeError(stats.error)}
        </Alert>
      )}
      {stats.data && <Counts stats={stats.data} />}
    </Stack>
  )
}

const sum = <T,>(rows: T[] | undefined, of: (row: T) => number) =>
  (rows ?? []).reduce((total, row) => total + of(row), 0)

function Counts({ stats }: { stats: SessionStats }) {
  const { issuance, presentation } = stats
  const totals = [
    ...(issuance ? [{ label: 'Issued', value: sum(issuance, (row) => row.issued) }] : []),
    ...(presentation ? [{ label: 'Verified', value: sum(presentation, (row) => row.verified) }] : []),
    {
      label: 'Failed',
      value: sum(issuance, (row) => row.failed) + sum(presentation, (row) => row.failed),
    },
  ]
  return (
    <>
      <Text size="sm" c="dimmed">
        Sessions created since {new Date(stats.since).toLocaleString()}, as the database holds them.
      </Text>
      <SimpleGrid cols={{ base: 1, sm: totals.length }}>
        {totals.map((total) => (
          <Card withBorder key={total.label} data-testid={`total-${total.label.toLowerCase()}`}>
            <Text size="sm">{total.label}</Text>
            <Text fz={32} fw={700}>
              {total.value}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      {issuance && (
        <CountTable
          title="Issuance per credential configuration"
          columns={['Offered', 'Issued', 'Failed', 'Expired']}
          rows={issuance.map((row) => [
            row.credentialConfigurationId,
            row.offered,
            row.issued,
            row.failed,
            row.expired,
          ])}
        />
      )}
      {presentation && (
        <CountTable
          title="Presentation per presentation configuration"
          columns={['Requested', 'Verified', 'Failed', 'Expired']}
          rows={presentation.map((row) => [
            row.presentationConfigId,
            row.requested,
            row.verified,
            row.failed,
            row.expired,
          ])}
        />
      )}
    </>
  )
}

function CountTable({
  title,
  columns,
  rows,
}: {
  title: string
  columns: string[]
  rows: [string, ...number[]][]
}) {
  return (
    <Stack gap="xs">
      <Group>
        <Title order={2} size="h4">
          {title}
        </Title>
      </Group>
      {rows.length === 0 ? (
        <Text c="dimmed">No session in this window.</Text>
      ) : (
        <Table striped aria-label={title} w="auto">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Configuration</Table.Th>
              {columns.map((column) => (
                <Table.Th key={column}>{column}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map(([id, ...counts]) => (
              <Table.Tr key={id}>
                <Table.Td>{id}</Table.Td>
                {counts.map((count, index) => (
                  <Table.Td key={columns[index]}>{count}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  )
}
