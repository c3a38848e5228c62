import { type WalletProviderInput, zWalletProviderInput } from '@credential-service/core-domain'
import type { WalletProvider } from '@credential-service/sdk'
import { Button, MultiSelect, Stack, Text, Textarea, TextInput } from '@mantine/core'
import { canRead } from '../access'
import { useSession } from '../auth/auth'
import { CollectionPage, type ItemFormProps } from '../components/collection-page'
import { FormAlert } from '../components/form-alert'
import { useReferenceIds } from '../components/reference-ids'
import { optional, useApiForm } from '../forms/use-api-form'
import { walletProvidersApi } from './providers-api'

/** Wallet providers the tenant's issuer trusts: attestations must chain to their trust lists' certificates. */
export default function WalletProvidersPage() {
  const session = useSession()
  const api = walletProvidersApi(session.api, session.activeTenant ?? '')
  return (
    <CollectionPage
      page="wallet-providers"
      noun="wallet provider"
      api={api}
      intro={
        <Text c="dimmed" size="sm">
          Wallet and key attestations are trusted when their x5c chains to a certificate of one of these
          providers' trust lists.
        </Text>
      }
      columns={[
        { header: 'Name', cell: (provider) => provider.name },
        { header: 'Trust lists', cell: (provider) => (provider.trustListIds ?? []).join(', ') },
        { header: 'Updated', cell: (provider) => new Date(provider.updatedAt).toLocaleString() },
      ]}
      deleteMessage="Its attestations stop being trusted at once: configurations that require wallet or key attestations refuse its wallets."
      form={({ stored, onSaved }) => (
        <WalletProviderForm
          stored={stored}
          submit={(body) => (stored ? api.replace(stored.id, body) : api.create(body))}
          onSaved={onSaved}
        />
      )}
    />
  )
}

function WalletProviderForm({ stored, submit, onSaved }: ItemFormProps<WalletProvider, WalletProviderInput>) {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const trustLists = useReferenceIds(
    ['trust-lists', tenantId],
    (query) => session.api.listTrustListsOfTenant(tenantId, query),
    canRead(session, 'trust-lists'),
  )
  // Issue 25: trust comes from trust lists only (PEM anchors are a pem list on the Trust lists page).
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      id: stored?.id ?? '',
      name: stored?.name ?? '',
      description: stored?.description ?? '',
      trustListIds: [...(stored?.trustListIds ?? [])],
    },
    fields: () => ['id', 'name', 'description', 'trustListIds'],
    schema: zWalletProviderInput,
    toBody: (values): WalletProviderInput => ({
      id: values.id.trim(),
      name: values.name.trim(),
      description: optional(values.description),
      trustListIds: [...values.trustListIds],
    }),
    submit,
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Wallet provider">
      <Stack>
        <TextInput label="Id" required disabled={stored !== undefined} {...form.getInputProps('id')} />
        <TextInput label="Name" required {...form.getInputProps('name')} />
        <Textarea label="Description" autosize minRows={2} {...form.getInputProps('description')} />
        <MultiSelect
          label="Trust lists"
          description="The tenant's trust lists whose current certificates attestations must chain to (a PEM list holds certificates given here)"
          required
          placeholder={form.values.trustListIds.length ? undefined : 'None'}
          // The stored ids stay choosable when the list cannot be read or is longer than a page.
          data={[...new Set([...trustLists, ...form.values.trustListIds])]}
          searchable
          {...form.getInputProps('trustListIds')}
        />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save' : 'Create'}
        </Button>
      </Stack>
    </form>
  )
}
