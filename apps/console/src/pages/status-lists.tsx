import { zStatusHandle } from '@credential-service/core-domain'
import { Anchor, Card, Group, SegmentedControl, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { useState } from 'react'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { FilterCard, useSearch } from '../components/filter-card'
import { PageTitle } from '../components/shell'
import { StatusActions } from '../flows/status-actions'

/**
 * Token Status Lists (draft-ietf-oauth-status-list): revoke, suspend or reinstate the credentials
 * of an issuance session or of a status handle, and the tenant's lists as published.
 */
export default function StatusListsPage() {
  const session = useSession()
  return (
    <Stack>
      <PageTitle title={`Status lists of ${session.activeTenant}`} />
      {canWrite(session, 'status-lists') && <ChangeStatus />}
      <StatusListTable />
    </Stack>
  )
}

function ChangeStatus() {
  const [by, setBy] = useState<'session' | 'handle'>('session')
  const [value, setValue] = useState('')
  const trimmed = value.trim()
  const error =
    by === 'handle' && trimmed && !zStatusHandle.safeParse(trimmed).success
      ? 'A handle is printable ASCII without spaces, at most 200 characters'
      : undefined
  return (
    <Card withBorder component="section" aria-labelledby="change-status-title">
      <Stack>
        <Title order={2} size="h4" id="change-status-title">
          Change the status of credentials
        </Title>
        <Text size="sm">
          Every credential with a status list entry issued in the session, or for offers made with the handle,
          changes. Relying parties see it from the list’s next fetch (cached lists within 300 s).
        </Text>
        <SegmentedControl
          aria-label="Credentials by"
          w="fit-content"
          value={by}
          onChange={(picked) => setBy(picked as 'session' | 'handle')}
          data={[
            { value: 'session', label: 'By issuance session' },
            { value: 'handle', label: 'By status handle' },
          ]}
        />
        <Group align="flex-start">
          <TextInput
            label={by === 'session' ? 'Session id' : 'Status handle'}
            value={value}
            error={error}
            onChange={(event) => setValue(event.currentTarget.value)}
            miw={320}
          />
        </Group>
        <StatusActions
          key={`${by}:${trimmed}`}
          target={by === 'session' ? { sessionId: trimmed } : { handle: trimmed }}
          disabled={!trimmed || error !== undefined}
        />
      </Stack>
    </Card>
  )
}

function StatusListTable() {
  const [keyChainId, setKeyChainId] = useState('')
  return (
    <Stack component="section" aria-labelledby="status-lists-title">
      <Group justify="space-between" align="flex-end">
        <Title order={2} size="h4" id="status-lists-title">
          Published status lists
        </Title>
        <TextInput
          label="Key chain"
          placeholder="All key chains"
          value={keyChainId}
          onChange={(event) => setKeyChainId(event.currentTarget.value)}
        />
      </Group>
      {/* Another key chain starts again at the first page. */}
      <StatusListPages key={keyChainId.trim()} keyChainId={keyChainId.trim()} />
    </Stack>
  )
}

function StatusListPages({ keyChainId }: { keyChainId: string }) {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const pages = useCursorPages(['status-lists', tenantId, keyChainId], (query) =>
    api.listStatusListsOfTenant(tenantId, { ...query, ...(keyChainId ? { keyChainId } : {}) }),
  )
  const search = useSearch(pages.query.data?.items)
  return (
    <>
      <FilterCard label="Search status lists" search={search} />
      <Table striped aria-label="Status lists">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>List</Table.Th>
            <Table.Th>Key chain</Table.Th>
            <Table.Th>Entries used</Table.Th>
            <Table.Th>Bits</Table.Th>
            <Table.Th>Version</Table.Th>
            <Table.Th>Last signed</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {search.items.map((list) => (
            <Table.Tr key={list.id}>
              <Table.Td>
                <Anchor href={list.uri} target="_blank" rel="noreferrer">
                  {list.id}
                </Anchor>
              </Table.Td>
              <Table.Td>{list.keyChainId}</Table.Td>
              <Table.Td>
                {list.allocated} of {list.capacity} (size {list.size})
              </Table.Td>
              <Table.Td>{list.bits}</Table.Td>
              <Table.Td>{list.version}</Table.Td>
              <Table.Td>
                {list.signedAt ? new Date(list.signedAt).toLocaleString() : 'not yet fetched'}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && (
        <Text c="dimmed">
          No status list yet: lists open as credentials with status management are issued.
        </Text>
      )}
      <PagerBar pages={pages} label="status lists" />
    </>
  )
}
