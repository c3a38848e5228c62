import { type WalletProviderInput, zWalletProviderInput } from '@credential-service/core-domain'
import type { WalletProvider } from '@credential-service/sdk'
import { Button, Group, Stack, Text, Textarea, TextInput } from '@mantine/core'
import { useSession } from '../auth/auth'
import { CollectionPage, type ItemFormProps } from '../components/collection-page'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'
import { walletProvidersApi } from './providers-api'

/** Wallet providers the tenant's issuer trusts: attestations must chain to their trust anchors. */
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
          Wallet and key attestations are trusted when their x5c chains to a trust anchor of one of these.
        </Text>
      }
      columns={[
        { header: 'Name', cell: (provider) => provider.name },
        { header: 'Trust anchors', cell: (provider) => provider.trustAnchors.length },
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
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      id: stored?.id ?? '',
      name: stored?.name ?? '',
      description: stored?.description ?? '',
      trustAnchors: stored?.trustAnchors ?? [''],
    },
    // One input per anchor: a certificate that does not parse is named by its index.
    fields: (values) => [
      'id',
      'name',
      'description',
      'trustAnchors',
      ...values.trustAnchors.map((_, index) => `trustAnchors.${index}`),
    ],
    schema: zWalletProviderInput,
    toBody: (values): WalletProviderInput => ({
      id: values.id.trim(),
      name: values.name.trim(),
      description: optional(values.description),
      trustAnchors: values.trustAnchors.map((pem) => pem.trim()),
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
        {form.values.trustAnchors.map((_, index) => (
          <Stack key={index} gap={4}>
            <Textarea
              label={`Trust anchor ${index + 1}`}
              description="PEM certificate (-----BEGIN CERTIFICATE-----…)"
              required
              autosize
              minRows={3}
              maxRows={10}
              styles={{ input: { fontFamily: 'monospace' } }}
              {...form.getInputProps(`trustAnchors.${index}`)}
            />
            {form.values.trustAnchors.length > 1 && (
              <Group justify="flex-end">
                <Button
                  variant="subtle"
                  color="red"
                  size="xs"
                  onClick={() => form.removeListItem('trustAnchors', index)}
                >
                  Remove trust anchor {index + 1}
                </Button>
              </Group>
            )}
          </Stack>
        ))}
        <FormAlert message={form.errors.trustAnchors} title="Trust anchors" />
        <Group>
          <Button
            variant="default"
            disabled={form.values.trustAnchors.length >= 20}
            onClick={() => form.insertListItem('trustAnchors', '')}
          >
            Add trust anchor
          </Button>
        </Group>
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save' : 'Create'}
        </Button>
      </Stack>
    </form>
  )
}
