import type { Session } from '@credential-service/sdk'
import { Badge, Table, Text, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { canRead } from '../access'
import { useSession } from '../auth/auth'
import { type ObservedStatus, sessionTimeline } from './session-timeline'

/**
 * The session's timeline: its record, each status its event stream brought while the page was
 * open, and its audit events when the roles read the audit log.
 */
export function TimelineSection({ session }: { session: Session }) {
  const signedIn = useSession()
  const tenantId = signedIn.activeTenant ?? ''
  const readsAudit = canRead(signedIn, 'audit-events')
  const [observed, setObserved] = useState<ObservedStatus[]>([])
  const { status, updatedAt } = session
  useEffect(() => {
    setObserved((all) =>
      all.some((entry) => entry.at === updatedAt && entry.status === status)
        ? all
        : [...all, { status, at: updatedAt }],
    )
  }, [status, updatedAt])
  const audit = useQuery({
    queryKey: ['audit-events', tenantId, 'session', session.id, updatedAt],
    queryFn: () => signedIn.api.listAuditEventsOfTenant(tenantId, { resourceId: session.id, limit: 100 }),
    enabled: readsAudit,
  })
  const events = sessionTimeline(session, observed, audit.data?.items ?? [])
  return (
    <section aria-labelledby="timeline-title">
      <Title order={2} size="h4" id="timeline-title" mb="xs">
        Timeline
      </Title>
      <Table striped w="auto" aria-label="Timeline">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            <Table.Th>What</Table.Th>
            <Table.Th>From</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {events.map((event) => (
            <Table.Tr key={`${event.at} ${event.what}`}>
              <Table.Td>{new Date(event.at).toLocaleString()}</Table.Td>
              <Table.Td>{event.what}</Table.Td>
              <Table.Td>
                <Badge variant="outline" color="gray.8">
                  {event.source}
                </Badge>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {!readsAudit && (
        <Text size="sm" c="dimmed" mt="xs">
          Audit events (credential status changes) need the role tenant:admin.
        </Text>
      )}
    </section>
  )
}
