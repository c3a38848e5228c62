import { type TRUST_LIST_STATES, zTrustListInput } from '@credential-service/core-domain'
import type { TrustList, TrustListDefinition } from '@credential-service/sdk'
import {
  Badge,
  Button,
  NumberInput,
  SegmentedControl,
  Stack,
  TagsInput,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core'
import { useSession } from '../auth/auth'
import { CollectionPage, type ItemFormProps } from '../components/collection-page'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'
import { splitPems } from '../presentation-configs/presentation-values'
import { trustListsApi } from './providers-api'

type SourceType = TrustListDefinition['source']['type']

const SOURCE_TYPES: { value: SourceType; label: string }[] = [
  { value: 'pem', label: 'PEM certificates' },
  { value: 'etsi-tl', label: 'ETSI trusted list (TS 119 612)' },
  { value: 'etsi-lotl', label: 'ETSI list of trusted lists (LOTL)' },
  { value: 'lote', label: 'List of trusted entities (TS 119 602)' },
  { value: 'openid-federation', label: 'OpenID Federation trust anchor' },
]

const STATE_COLORS: Record<(typeof TRUST_LIST_STATES)[number], string> = {
  current: 'teal.9',
  pending: 'yellow.4',
  expired: 'red.9',
}

const when = (timestamp: string | null) => (timestamp ? new Date(timestamp).toLocaleString() : '—')

/** Certificates presentation configurations let credential issuers chain to (`trustListIds`). */
export default function TrustListsPage() {
  const session = useSession()
  const api = trustListsApi(session.api, session.activeTenant ?? '')
  return (
    <CollectionPage
      page="trust-lists"
      noun="trust list"
      api={api}
      intro={
        <Text c="dimmed" size="sm">
          Certificates credential issuers may chain to, given as PEM or fetched from a signed ETSI trusted
          list or list of trusted entities, or an OpenID Federation trust anchor their trust chains reach. A
          presentation configuration names the lists it trusts.
        </Text>
      }
      columns={[
        { header: 'Source', cell: (list) => <Badge variant="light">{list.source.type}</Badge> },
        {
          header: 'State',
          cell: (list) => (
            // Filled, with the text colour picked for contrast: a light yellow badge fails axe color-contrast.
            <Badge color={STATE_COLORS[list.status.state]} autoContrast>
              {list.status.state}
            </Badge>
          ),
        },
        { header: 'Certificates', cell: (list) => list.status.certificateCount },
        { header: 'Next update', cell: (list) => when(list.status.nextUpdate) },
        {
          header: 'Last error',
          cell: (list) =>
            list.status.lastError ? (
              <Text size="sm" c="red">
                {list.status.lastError}
              </Text>
            ) : (
              '—'
            ),
        },
      ]}
      deleteMessage="Its certificates stop being trusted at once. The API refuses while a presentation configuration names it."
      form={({ stored, onSaved }) => (
        <TrustListForm
          stored={stored}
          submit={(body) => (stored ? api.replace(stored.id, body) : api.create(body))}
          onSaved={onSaved}
        />
      )}
    />
  )
}

/** The form's values of a stored list (or a new one), every source's inputs kept while switching. */
function trustListValues(stored: TrustList | undefined) {
  const source = stored?.source
  const fetched = source && 'url' in source ? source : undefined
  const federation = source?.type === 'openid-federation' ? source : undefined
  return {
    id: stored?.id ?? '',
    description: stored?.description ?? '',
    graceSeconds: (stored?.graceSeconds ?? 86_400) as number | string,
    source: {
      type: (source?.type ?? 'pem') as SourceType,
      certificates: source?.type === 'pem' ? source.certificates.join('\n') : '',
      url: fetched?.url ?? '',
      signerCertificates: (fetched?.signerCertificates ?? []).join('\n'),
      serviceTypes: [...(fetched?.serviceTypes ?? [])],
      refreshSeconds: (fetched?.refreshSeconds ?? 3600) as number | string,
      territories: [...(source?.type === 'etsi-lotl' ? (source.territories ?? []) : [])],
      trustAnchor: federation?.trustAnchor ?? '',
      jwks: federation ? JSON.stringify(federation.jwks, null, 2) : '',
      requiredTrustMarkTypes: [...(federation?.requiredTrustMarkTypes ?? [])],
    },
  }
}

type TrustListValues = ReturnType<typeof trustListValues>

/** The anchor's JWKS as typed: JSON when it parses, else the text, which the schema refuses by name. */
function parsedJwks(text: string) {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function sourceBody(source: TrustListValues['source']): TrustListDefinition['source'] {
  if (source.type === 'openid-federation')
    return {
      type: 'openid-federation',
      trustAnchor: source.trustAnchor.trim(),
      jwks: parsedJwks(source.jwks),
      ...(source.requiredTrustMarkTypes.length
        ? { requiredTrustMarkTypes: [...source.requiredTrustMarkTypes] }
        : {}),
    }
  return source.type === 'pem'
    ? { type: 'pem', certificates: splitPems(source.certificates) }
    : {
        type: source.type,
        url: source.url.trim(),
        signerCertificates: splitPems(source.signerCertificates),
        serviceTypes: source.serviceTypes.length ? [...source.serviceTypes] : undefined,
        refreshSeconds: Number(source.refreshSeconds),
        ...(source.type === 'etsi-lotl' && source.territories.length
          ? { territories: source.territories.map((territory) => territory.trim().toUpperCase()) }
          : {}),
      }
}

function trustListBody(values: TrustListValues): TrustListDefinition {
  return {
    id: values.id.trim(),
    description: optional(values.description),
    graceSeconds: Number(values.graceSeconds),
    source: sourceBody(values.source),
  }
}

function TrustListForm({ stored, submit, onSaved }: ItemFormProps<TrustList, TrustListDefinition>) {
  const { form, onSubmit, pending } = useApiForm({
    initialValues: trustListValues(stored),
    fields: [
      'id',
      'description',
      'graceSeconds',
      'source.type',
      'source.certificates',
      'source.url',
      'source.signerCertificates',
      'source.serviceTypes',
      'source.refreshSeconds',
      'source.territories',
      'source.trustAnchor',
      'source.jwks',
      'source.requiredTrustMarkTypes',
    ],
    schema: zTrustListInput,
    toBody: trustListBody,
    submit,
    onDone: onSaved,
  })
  const type = form.values.source.type
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Trust list">
      <Stack>
        <TextInput label="Id" required disabled={stored !== undefined} {...form.getInputProps('id')} />
        <Textarea label="Description" autosize minRows={1} {...form.getInputProps('description')} />
        <Stack gap={4}>
          <Text size="sm" fw={500} id="trust-list-source-label">
            Source
          </Text>
          <SegmentedControl
            aria-labelledby="trust-list-source-label"
            data={SOURCE_TYPES}
            {...form.getInputProps('source.type')}
          />
        </Stack>
        {type === 'openid-federation' ? (
          <>
            <TextInput
              label="Trust anchor"
              description="The anchor's entity identifier (https URL); issuers' trust chains must reach it"
              required
              {...form.getInputProps('source.trustAnchor')}
            />
            <Textarea
              label="Anchor keys (JWKS)"
              description={'The anchor federation keys as a JWK Set ({"keys": [...]}), each with a kid'}
              required
              autosize
              minRows={4}
              maxRows={14}
              styles={{ input: { fontFamily: 'monospace' } }}
              {...form.getInputProps('source.jwks')}
            />
            <TagsInput
              label="Required trust marks"
              description="Trust mark types an issuer must hold; Enter to add. None: no trust mark required"
              {...form.getInputProps('source.requiredTrustMarkTypes')}
            />
          </>
        ) : type === 'pem' ? (
          <Textarea
            label="Certificates"
            description="PEM certificates (-----BEGIN CERTIFICATE-----…), one after the other"
            required
            autosize
            minRows={4}
            maxRows={14}
            styles={{ input: { fontFamily: 'monospace' } }}
            {...form.getInputProps('source.certificates')}
          />
        ) : (
          <>
            <TextInput
              label="URL"
              description={
                type === 'etsi-tl'
                  ? 'Where the trusted list (XML) is fetched'
                  : type === 'etsi-lotl'
                    ? 'Where the list of trusted lists (XML) is fetched; the lists it points to are fetched too'
                    : 'Where the signed list (JWS) is fetched'
              }
              required
              {...form.getInputProps('source.url')}
            />
            <Textarea
              label="Signer certificates"
              description={
                type === 'etsi-lotl'
                  ? 'PEM certificates allowed to sign the list of lists (the pointed lists are checked with the certificates their pointers name)'
                  : "PEM certificates allowed to sign the list (the scheme operator's)"
              }
              required
              autosize
              minRows={3}
              maxRows={10}
              styles={{ input: { fontFamily: 'monospace' } }}
              {...form.getInputProps('source.signerCertificates')}
            />
            <TagsInput
              label="Service types"
              description="Keep only services of these ServiceTypeIdentifier URIs; Enter to add. None: every service"
              {...form.getInputProps('source.serviceTypes')}
            />
            {type === 'etsi-lotl' ? (
              <TagsInput
                label="Territories"
                description="Follow only the lists of these SchemeTerritory codes (e.g. DE, AT); Enter to add. None: every list pointed to"
                {...form.getInputProps('source.territories')}
              />
            ) : null}
            <NumberInput
              label="Refresh (seconds)"
              description="How often the list is fetched again"
              min={60}
              max={604_800}
              {...form.getInputProps('source.refreshSeconds')}
            />
          </>
        )}
        <NumberInput
          label="Grace (seconds)"
          description="How long past the list's next update its last good content is still used"
          min={0}
          max={2_592_000}
          {...form.getInputProps('graceSeconds')}
        />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save' : 'Create'}
        </Button>
      </Stack>
    </form>
  )
}
