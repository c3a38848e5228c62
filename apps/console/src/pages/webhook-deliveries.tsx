import { WEBHOOK_DELIVERY_STATUSES } from '@credential-service/core-domain'
import type { WebhookDelivery } from '@credential-service/sdk'
import { Alert, Anchor, Badge, Button, Modal, Select, Stack, Table, Text } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useParams } from 'react-router'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { useCollection } from '../components/collection-page'
import { ConfirmButton } from '../components/confirm-button'
import { PagerBar } from '../components/cursor-pages'
import { FieldTable } from '../components/field-table'
import { FilterCard, useSearch } from '../components/filter-card'
import { FormAlert } from '../components/form-alert'
import { PageTitle } from '../components/shell'
import { toastDone } from '../components/toast'
import { describeError } from '../forms/problems'

type Status = (typeof WEBHOOK_DELIVERY_STATUSES)[number]

const STATUS_COLOR: Record<Status, string> = {
  pending: 'yellow.9',
  delivering: 'blue.9',
  delivered: 'teal.9',
  failed: 'red.9',
}

const when = (time: string | null) => (time ? new Date(time).toLocaleString() : '—')

/** The deliveries of one webhook endpoint, newest first: status filter, detail, replay. */
export default function WebhookDeliveriesPage() {
  const { webhookEndpointId = '' } = useParams()
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const [status, setStatus] = useState<Status>()
  const [replayed, setReplayed] = useState<string>()
  // Replaying needs the same roles as reading (either configuration role).
  const writable = canWrite(session, 'webhook-endpoints')
  const queryClient = useQueryClient()
  const refresh = () =>
    queryClient.invalidateQueries({
      queryKey: ['webhook-endpoints', tenantId, 'deliveries', webhookEndpointId],
    })
  return (
    <Stack>
      <PageTitle title={`Deliveries of ${webhookEndpointId}`}>
        <Button variant="default" component={Link} to="/webhook-endpoints">
          All webhook endpoints
        </Button>
        <Button variant="default" onClick={() => void refresh()}>
          Refresh
        </Button>
        {writable && (
          <ConfirmButton
            label="Replay failed"
            color="blue"
            title={`Send every failed delivery of ${webhookEndpointId} again?`}
            message="Each failed delivery is queued again, due now, with a fresh count of attempts; the receiver gets the same bodies again."
            onConfirm={async () => {
              const result = await session.api.replayFailedWebhookDeliveriesOfTenant(
                tenantId,
                webhookEndpointId,
              )
              setReplayed(
                `${result.replayed} failed ${result.replayed === 1 ? 'delivery' : 'deliveries'} queued again.`,
              )
            }}
            onDone={() => void refresh()}
          />
        )}
      </PageTitle>
      {replayed && (
        <Alert
          color="teal"
          role="status"
          data-testid="replay-result"
          withCloseButton
          onClose={() => setReplayed(undefined)}
        >
          {replayed}
        </Alert>
      )}
      <Select
        label="Status"
        placeholder="Any"
        clearable
        w={220}
        data={[...WEBHOOK_DELIVERY_STATUSES]}
        value={status ?? null}
        onChange={(value) => setStatus((value as Status | null) ?? undefined)}
      />
      {/* Another filter starts again at the first page. */}
      <DeliveryList
        key={status ?? ''}
        endpointId={webhookEndpointId}
        status={status}
        writable={writable}
        onReplayed={(delivery) => setReplayed(`Delivery ${delivery.id} queued again.`)}
      />
    </Stack>
  )
}

function DeliveryList({
  endpointId,
  status,
  writable,
  onReplayed,
}: {
  endpointId: string
  status: Status | undefined
  writable: boolean
  onReplayed: (delivery: WebhookDelivery) => void
}) {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const { pages, changed } = useCollection(
    ['webhook-endpoints', tenantId, 'deliveries', endpointId, status ?? ''],
    (query) =>
      api.listWebhookDeliveriesOfTenant(tenantId, endpointId, { ...query, ...(status ? { status } : {}) }),
  )
  const search = useSearch(pages.query.data?.items)
  const [shown, setShown] = useState<string>()
  const replay = useMutation({
    mutationFn: (deliveryId: string) => api.replayWebhookDeliveryOfTenant(tenantId, endpointId, deliveryId),
    onSuccess: (delivery) => {
      toastDone(`Delivery ${delivery.id} queued again`)
      onReplayed(delivery)
      void changed()
    },
  })
  return (
    <>
      <FormAlert message={replay.error ? describeError(replay.error) : undefined} title="Not replayed" />
      <FilterCard label="Search deliveries" search={search} />
      <Table striped aria-label="Deliveries">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Delivery</Table.Th>
            <Table.Th>Event</Table.Th>
            <Table.Th>Session</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Attempts</Table.Th>
            <Table.Th>Last error</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Replay</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {search.items.map((delivery) => (
            <Table.Tr key={delivery.id}>
              <Table.Td>
                <Anchor component="button" type="button" size="sm" onClick={() => setShown(delivery.id)}>
                  {delivery.id}
                </Anchor>
              </Table.Td>
              <Table.Td>{delivery.eventType}</Table.Td>
              <Table.Td>
                <Text size="sm">{delivery.sessionId}</Text>
              </Table.Td>
              <Table.Td>
                <DeliveryStatus status={delivery.status} />
              </Table.Td>
              <Table.Td>{delivery.attempts}</Table.Td>
              <Table.Td>
                <Text size="sm">{delivery.lastError ?? '—'}</Text>
              </Table.Td>
              <Table.Td>{when(delivery.createdAt)}</Table.Td>
              <Table.Td>
                {writable && (
                  <Button
                    size="xs"
                    variant="default"
                    aria-label={`Replay ${delivery.id}`}
                    // The API refuses while an attempt is under way, and once the body was dropped.
                    disabled={delivery.status === 'delivering' || !delivery.replayable}
                    loading={replay.isPending && replay.variables === delivery.id}
                    onClick={() => replay.mutate(delivery.id)}
                  >
                    Replay
                  </Button>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No delivery matches.</Text>}
      <PagerBar pages={pages} label="deliveries" />
      <Modal
        opened={shown !== undefined}
        onClose={() => setShown(undefined)}
        title={`Delivery ${shown}`}
        size="lg"
      >
        {shown && <DeliveryDetail endpointId={endpointId} deliveryId={shown} />}
      </Modal>
    </>
  )
}

function DeliveryStatus({ status }: { status: Status }) {
  return (
    <Badge color={STATUS_COLOR[status]} data-testid="delivery-status">
      {status}
    </Badge>
  )
}

/** One delivery as the outbox keeps it (never the body: it may carry disclosed claims). */
function DeliveryDetail({ endpointId, deliveryId }: { endpointId: string; deliveryId: string }) {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const delivery = useQuery({
    queryKey: ['webhook-endpoints', tenantId, 'deliveries', endpointId, 'item', deliveryId],
    queryFn: () => api.getWebhookDeliveryOfTenant(tenantId, endpointId, deliveryId),
  })
  if (delivery.isPending) return <Busy label="Loading the delivery" />
  if (delivery.isError)
    return <FormAlert title="Could not load the delivery" message={describeError(delivery.error)} />
  const d = delivery.data
  const rows: [string, React.ReactNode][] = [
    ['Event', d.eventType],
    ['Session', d.sessionId],
    ['Status', <DeliveryStatus key="status" status={d.status} />],
    ['Attempts', d.attempts],
    ['Last error (status or cause)', d.lastError ?? '—'],
    ['Next attempt', when(d.nextAttemptAt)],
    ['Delivered', when(d.deliveredAt)],
    ['Body kept (replayable)', d.replayable ? 'yes' : 'no: dropped once delivered'],
    ['Created', when(d.createdAt)],
    ['Updated', when(d.updatedAt)],
  ]
  return <FieldTable label="Delivery" testId="delivery-detail" rows={rows} />
}
