import { SESSION_KINDS, SESSION_STATUSES } from '@credential-service/core-domain'
import type { ManagementClient, Session } from '@credential-service/sdk'
import { Anchor, Select, Stack, Table, Text, TextInput } from '@mantine/core'
import { Link } from 'react-router'
import { useSession } from '../auth/auth'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { FilterCard, matchesSearch, useFilters, useSearch, utc } from '../components/filter-card'
import { PageTitle } from '../components/shell'
import { StatusBadge } from '../flows/live-session'

type SessionQuery = NonNullable<Parameters<ManagementClient['listSessionsOfTenant']>[1]>

interface Filters {
  kind: string
  status: string
  configId: string
  createdAfter: string
  createdBefore: string
}

const NO_FILTERS: Filters = { kind: '', status: '', configId: '', createdAfter: '', createdBefore: '' }

/** The list query of the filters: empty ones left out. */
export function sessionQuery(filters: Filters): Omit<SessionQuery, 'limit' | 'cursor'> {
  const after = utc(filters.createdAfter)
  const before = utc(filters.createdBefore)
  return {
    ...(filters.kind ? { kind: filters.kind as SessionQuery['kind'] } : {}),
    ...(filters.status ? { status: filters.status as SessionQuery['status'] } : {}),
    ...(filters.configId.trim() ? { configId: filters.configId.trim() } : {}),
    ...(after ? { createdAfter: after } : {}),
    ...(before ? { createdBefore: before } : {}),
  }
}

export const configurationsOf = (session: Session) =>
  session.kind === 'issuance' ? session.credentialConfigurationIds.join(', ') : session.presentationConfigId

/** Issuance and presentation sessions of the tenant, newest first, filtered as the API can. */
export default function SessionsPage() {
  const { activeTenant } = useSession()
  const filters = useFilters<Filters>(NO_FILTERS)
  const search = useSearch()
  const { draft, set } = filters
  return (
    <Stack>
      <PageTitle title={`Sessions of ${activeTenant}`} />
      <FilterCard label="Filter sessions" filters={filters} search={search} cols={{ base: 1, sm: 3, lg: 6 }}>
        <Select
          label="Kind"
          placeholder="Both"
          clearable
          data={[...SESSION_KINDS]}
          value={draft.kind || null}
          onChange={set('kind')}
        />
        <Select
          label="Status"
          placeholder="Any"
          clearable
          data={[...SESSION_STATUSES]}
          value={draft.status || null}
          onChange={set('status')}
        />
        <TextInput
          label="Configuration"
          placeholder="Credential or presentation configuration id"
          value={draft.configId}
          onChange={(event) => set('configId')(event.currentTarget.value)}
        />
        <TextInput
          label="Created after"
          type="datetime-local"
          value={draft.createdAfter}
          onChange={(event) => set('createdAfter')(event.currentTarget.value)}
        />
        <TextInput
          label="Created before"
          type="datetime-local"
          value={draft.createdBefore}
          onChange={(event) => set('createdBefore')(event.currentTarget.value)}
        />
      </FilterCard>
      {/* A new filter starts again at the first page. */}
      <SessionList key={JSON.stringify(filters.applied)} filters={filters.applied} search={search.value} />
    </Stack>
  )
}

function SessionList({ filters, search }: { filters: Filters; search: string }) {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const query = sessionQuery(filters)
  const pages = useCursorPages(['sessions', tenantId, 'list', query], (page) =>
    api.listSessionsOfTenant(tenantId, { ...page, ...query }),
  )
  return (
    <>
      <Table striped aria-label="Sessions">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Session</Table.Th>
            <Table.Th>Kind</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Configurations</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Expires</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {pages.query.data?.items
            .filter((session) => matchesSearch(session, search))
            .map((session) => (
              <Table.Tr key={session.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/sessions/${encodeURIComponent(session.id)}`}>
                    {session.id}
                  </Anchor>
                </Table.Td>
                <Table.Td>{session.kind}</Table.Td>
                <Table.Td>
                  <StatusBadge status={session.status} />
                </Table.Td>
                <Table.Td>{configurationsOf(session)}</Table.Td>
                <Table.Td>{new Date(session.createdAt).toLocaleString()}</Table.Td>
                <Table.Td>{new Date(session.expiresAt).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No session matches.</Text>}
      <PagerBar pages={pages} label="sessions" />
    </>
  )
}
