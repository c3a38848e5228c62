import { Badge, Text } from '@mantine/core'
import { useSession } from '../auth/auth'
import { CollectionPage } from '../components/collection-page'
import { EndpointForm } from './endpoint-form'
import { attributeProvidersApi } from './providers-api'

/** Attribute providers of the active tenant: list, create, edit, delete; a new HMAC secret shown once. */
export default function AttributeProvidersPage() {
  const session = useSession()
  const api = attributeProvidersApi(session.api, session.activeTenant ?? '')
  return (
    <CollectionPage
      page="attribute-providers"
      noun="attribute provider"
      api={api}
      intro={
        <Text c="dimmed" size="sm">
          Services the issuer asks for a credential's claims when an offer leaves them out.
        </Text>
      }
      columns={[
        { header: 'URL', cell: (provider) => <Text size="sm">{provider.url}</Text> },
        { header: 'Authentication', cell: (provider) => <Badge variant="light">{provider.auth.type}</Badge> },
        { header: 'Timeout', cell: (provider) => `${provider.timeoutMs} ms` },
        { header: 'Updated', cell: (provider) => new Date(provider.updatedAt).toLocaleString() },
      ]}
      deleteMessage="Offers can no longer take claims from it. The API refuses while a credential configuration names it."
      secretOf={(saved) => saved.signingSecret}
      form={({ stored, onSaved }) => (
        <EndpointForm
          kind="attribute-provider"
          stored={stored}
          submit={stored ? (body) => api.replace(stored.id, body) : api.create}
          onSaved={onSaved}
        />
      )}
    />
  )
}
