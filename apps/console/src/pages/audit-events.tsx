import { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES } from '@credential-service/core-domain'
import type { ManagementClient } from '@credential-service/sdk'
import { Badge, Select, Stack, Table, Text, TextInput } from '@mantine/core'
import { isOperator } from '../access'
import { useSession } from '../auth/auth'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { FilterCard, matchesSearch, useFilters, useSearch, utc } from '../components/filter-card'
import { PageTitle } from '../components/shell'

type AuditQuery = NonNullable<Parameters<ManagementClient['listAuditEvents']>[0]>

interface Filters {
  action: string
  resourceType: string
  resourceId: string
  since: string
  until: string
}

const NO_FILTERS: Filters = { action: '', resourceType: '', resourceId: '', since: '', until: '' }

/** The list query of the filters, empty ones left out; an operator's picked tenant narrows it. */
export function auditQuery(
  filters: Filters,
  tenantId: string | undefined,
): Omit<AuditQuery, 'limit' | 'cursor'> {
  const since = utc(filters.since)
  const until = utc(filters.until)
  return {
    ...(filters.action ? { action: filters.action as AuditQuery['action'] } : {}),
    ...(filters.resourceType ? { resourceType: filters.resourceType as AuditQuery['resourceType'] } : {}),
    ...(filters.resourceId.trim() ? { resourceId: filters.resourceId.trim() } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(tenantId ? { tenantId } : {}),
  }
}

/**
 * `/api/audit-events`: who changed what and when, newest first (never values or secrets). A
 * tenant's administrator reads its tenant; an operator every tenant, or the picked one.
 */
export default function AuditEventsPage() {
  const session = useSession()
  const operator = isOperator(session)
  const filters = useFilters<Filters>(NO_FILTERS)
  const search = useSearch()
  const { draft, set } = filters
  const scope = operator ? session.activeTenant : undefined
  return (
    <Stack>
      <PageTitle
        title={
          operator
            ? scope
              ? `Audit events of ${scope}`
              : 'Audit events of every tenant'
            : `Audit events of ${session.tenantId}`
        }
      />
      <FilterCard
        label="Filter audit events"
        filters={filters}
        search={search}
        cols={{ base: 1, sm: 3, lg: 4 }}
      >
        <Select
          label="Action"
          placeholder="Any"
          clearable
          data={[...AUDIT_ACTIONS]}
          value={draft.action || null}
          onChange={set('action')}
        />
        <Select
          label="Resource type"
          placeholder="Any"
          clearable
          searchable
          data={[...AUDIT_RESOURCE_TYPES]}
          value={draft.resourceType || null}
          onChange={set('resourceType')}
        />
        <TextInput
          label="Resource id"
          placeholder="A client, a session, ..."
          value={draft.resourceId}
          onChange={(event) => set('resourceId')(event.currentTarget.value)}
        />
        <TextInput
          label="Since"
          type="datetime-local"
          value={draft.since}
          onChange={(event) => set('since')(event.currentTarget.value)}
        />
        <TextInput
          label="Until"
          type="datetime-local"
          value={draft.until}
          onChange={(event) => set('until')(event.currentTarget.value)}
        />
      </FilterCard>
      {/* A new filter or tenant starts again at the first page. */}
      <AuditList
        key={JSON.stringify([filters.applied, scope])}
        query={auditQuery(filters.applied, scope)}
        search={search.value}
      />
    </Stack>
  )
}

function AuditList({ query, search }: { query: Omit<AuditQuery, 'limit' | 'cursor'>; search: string }) {
  const { api } = useSession()
  const pages = useCursorPages(['audit-events', query], (page) => api.listAuditEvents({ ...page, ...query }))
  return (
    <>
      <Table striped aria-label="Audit events">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            <Table.Th>Tenant</Table.Th>
            <Table.Th>Client</Table.Th>
            <Table.Th>Action</Table.Th>
            <Table.Th>Resource</Table.Th>
            <Table.Th>Changed fields</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {pages.query.data?.items
            .filter((event) => matchesSearch(event, search))
            .map((event) => (
              <Table.Tr key={event.id}>
                <Table.Td>{new Date(event.at).toLocaleString()}</Table.Td>
                <Table.Td>{event.tenantId ?? 'operator'}</Table.Td>
                <Table.Td>{event.actorClientId}</Table.Td>
                <Table.Td>
                  <Badge variant="light">{event.action}</Badge>
                </Table.Td>
                <Table.Td>
                  {event.resourceType} {event.resourceId}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{event.fields.join(', ')}</Text>
                </Table.Td>
              </Table.Tr>
            ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No audit event matches.</Text>}
      <PagerBar pages={pages} label="audit events" />
    </>
  )
}
