import type { IssuanceSession, PresentationSession, Session } from '@credential-service/sdk'
import { Alert, Stack, Table, Title } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { useNavigate, useParams } from 'react-router'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { ConfirmButton } from '../components/confirm-button'
import { PageTitle } from '../components/shell'
import { StatusBadge, useLiveSession } from '../flows/live-session'
import { PresentationOutcome } from '../flows/presentation-outcome'
import { StatusActions } from '../flows/status-actions'
import { TimelineSection } from '../flows/timeline-section'
import { describeError } from '../forms/problems'
import { configurationsOf } from './sessions'

const when = (timestamp: string | null | undefined) =>
  timestamp ? new Date(timestamp).toLocaleString() : '—'

/** One session: everything the API tells of it, followed live while open; delete it (confirmed). */
export default function SessionDetailPage() {
  const { sessionId = '' } = useParams()
  const { api, activeTenant, roles } = useSession()
  const tenantId = activeTenant ?? ''
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const live = useLiveSession(api, tenantId, sessionId)
  const session = live.data
  return (
    <Stack>
      <PageTitle title={`Session ${sessionId}`}>
        {session && (
          <ConfirmButton
            label="Delete"
            title={`Delete session ${sessionId}?`}
            message="The session goes with its claims, result, notifications and webhook deliveries; an open offer or request stops working at once. This cannot be undone."
            onConfirm={() => api.deleteSessionOfTenant(tenantId, sessionId)}
            onDone={() => {
              void queryClient.invalidateQueries({ queryKey: ['sessions', tenantId] })
              navigate('/sessions')
            }}
          />
        )}
      </PageTitle>
      {live.isPending && <Busy label="Loading the session" />}
      {live.isError && (
        <Alert color="red" title="Could not read the session" role="alert">
          {describeError(live.error)}
        </Alert>
      )}
      {session && <SessionTable session={session} />}
      {session?.kind === 'issuance' && (
        <IssuanceDetails session={session} canChangeStatus={roles.includes('issuance:offer')} />
      )}
      {session?.kind === 'presentation' && <PresentationOutcome session={session} />}
      {session && <TimelineSection session={session} />}
    </Stack>
  )
}

function SessionTable({ session }: { session: Session }) {
  const rows: [string, React.ReactNode][] = [
    ['Kind', session.kind],
    ['Status', <StatusBadge key="status" status={session.status} />],
    ['Configurations', configurationsOf(session)],
    ...(session.kind === 'issuance' ? issuanceRows(session) : presentationRows(session)),
    ['Failure reason', session.failureReason ?? '—'],
    ['Created by client', session.createdByClientId],
    ['Created', when(session.createdAt)],
    ['Updated', when(session.updatedAt)],
    ['Expires', when(session.expiresAt)],
  ]
  return (
    <Table variant="vertical" w="auto" aria-label="Session">
      <Table.Tbody>
        {rows.map(([name, value]) => (
          <Table.Tr key={name}>
            <Table.Th>{name}</Table.Th>
            <Table.Td>{value}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}

const issuanceRows = (session: IssuanceSession): [string, React.ReactNode][] => [
  ['Issued configurations', session.issuedConfigurationIds.join(', ') || '—'],
  ['Transaction code required', session.txCodeRequired ? 'yes' : 'no'],
  ['Offer by reference', session.byReference ? 'yes' : 'no'],
  ['Offer fetched', when(session.offerFetchedAt)],
  ['Token issued', when(session.tokenIssuedAt)],
  ['Credential issued', when(session.credentialIssuedAt)],
]

const presentationRows = (session: PresentationSession): [string, React.ReactNode][] => [
  ['Same-device (response code)', session.responseCodeRequired ? 'yes' : 'no'],
  ['Request fetched', when(session.requestFetchedAt)],
  ['Response received', when(session.responseReceivedAt)],
  [
    'Webhook delivery',
    `${session.delivery.status}, ${session.delivery.attempts} attempts${session.delivery.error ? `: ${session.delivery.error}` : ''}`,
  ],
]

function IssuanceDetails({
  session,
  canChangeStatus,
}: {
  session: IssuanceSession
  canChangeStatus: boolean
}) {
  return (
    <>
      {session.notifications && session.notifications.length > 0 && (
        <section aria-labelledby="notifications-title">
          <Title order={2} size="h4" id="notifications-title" mb="xs">
            Wallet notifications
          </Title>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Configuration</Table.Th>
                <Table.Th>Event</Table.Th>
                <Table.Th>Received</Table.Th>
                <Table.Th>Webhook delivery</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {session.notifications.map((notification) => (
                <Table.Tr key={notification.credentialConfigurationId}>
                  <Table.Td>{notification.credentialConfigurationId}</Table.Td>
                  <Table.Td>{notification.event ?? '—'}</Table.Td>
                  <Table.Td>{when(notification.receivedAt)}</Table.Td>
                  <Table.Td>
                    {notification.delivery.status} ({notification.delivery.attempts} attempts)
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </section>
      )}
      {canChangeStatus && session.issuedConfigurationIds.length > 0 && (
        <section aria-labelledby="credential-status-title">
          <Title order={2} size="h4" id="credential-status-title" mb="xs">
            Status of the issued credentials
          </Title>
          <StatusActions target={{ sessionId: session.id }} />
        </section>
      )}
    </>
  )
}
