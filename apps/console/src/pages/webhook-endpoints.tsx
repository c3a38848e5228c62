import { Badge, Button, Text } from '@mantine/core'
import { Link } from 'react-router'
import { useSession } from '../auth/auth'
import { CollectionPage } from '../components/collection-page'
import { EndpointForm } from './endpoint-form'
import { webhookEndpointsApi } from './providers-api'

/** Webhook endpoints of the active tenant: list, create, edit, delete; each one's deliveries. */
export default function WebhookEndpointsPage() {
  const session = useSession()
  const api = webhookEndpointsApi(session.api, session.activeTenant ?? '')
  return (
    <CollectionPage
      page="webhook-endpoints"
      noun="webhook endpoint"
      api={api}
      intro={
        <Text c="dimmed" size="sm">
          Where issuance notifications and presentation results are delivered (at least once, with retries). A
          configuration or a request names the endpoint.
        </Text>
      }
      columns={[
        { header: 'URL', cell: (endpoint) => <Text size="sm">{endpoint.url}</Text> },
        { header: 'Events', cell: (endpoint) => endpoint.events?.join(', ') || 'all' },
        { header: 'Authentication', cell: (endpoint) => <Badge variant="light">{endpoint.auth.type}</Badge> },
        { header: 'Updated', cell: (endpoint) => new Date(endpoint.updatedAt).toLocaleString() },
      ]}
      rowActions={(endpoint) => (
        <Button
          variant="default"
          size="xs"
          component={Link}
          to={`/webhook-endpoints/${encodeURIComponent(endpoint.id)}/deliveries`}
          aria-label={`Deliveries of ${endpoint.id}`}
        >
          Deliveries
        </Button>
      )}
      deleteMessage="No more events are delivered to it. The API refuses while a credential or presentation configuration names it."
      secretOf={(saved) => saved.signingSecret}
      form={({ stored, onSaved }) => (
        <EndpointForm
          kind="webhook-endpoint"
          stored={stored}
          submit={stored ? (body) => api.replace(stored.id, body) : api.create}
          onSaved={onSaved}
        />
      )}
    />
  )
}
