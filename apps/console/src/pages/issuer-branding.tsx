import {
  type IssuerDisplay,
  LOGO_CONTENT_TYPES,
  type TenantUpdate,
  zTenantUpdate,
} from '@credential-service/core-domain'
import type { Tenant } from '@credential-service/sdk'
import {
  Alert,
  Button,
  Card,
  FileButton,
  Group,
  Image,
  Paper,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { FormAlert } from '../components/form-alert'
import { PageTitle } from '../components/shell'
import { describeError } from '../forms/problems'
import { optional, useApiForm } from '../forms/use-api-form'

/** One display entry as the form edits it: every member a string, empty when left out. */
interface EntryValues {
  locale: string
  name: string
  logo: { uri: string; alt_text: string }
  background_color: string
  text_color: string
}

const MEMBERS = ['locale', 'name', 'logo.uri', 'logo.alt_text', 'background_color', 'text_color'] as const

const valuesOf = (entry: IssuerDisplay): EntryValues => ({
  locale: entry.locale ?? '',
  name: entry.name ?? '',
  logo: { uri: entry.logo?.uri ?? '', alt_text: entry.logo?.alt_text ?? '' },
  background_color: entry.background_color ?? '',
  text_color: entry.text_color ?? '',
})

const entryOf = (values: EntryValues): IssuerDisplay => {
  const uri = optional(values.logo.uri)
  const alt = optional(values.logo.alt_text)
  return {
    ...(optional(values.locale) ? { locale: values.locale.trim() } : {}),
    ...(optional(values.name) ? { name: values.name.trim() } : {}),
    ...(uri ? { logo: { uri, ...(alt ? { alt_text: alt } : {}) } } : {}),
    ...(optional(values.background_color) ? { background_color: values.background_color.trim() } : {}),
    ...(optional(values.text_color) ? { text_color: values.text_color.trim() } : {}),
  }
}

const emptyEntry = (): EntryValues => valuesOf({})

/**
 * Issue 42 item 5: the issuer's `display` in its credential issuer metadata (OpenID4VCI 1.0
 * §12.2.4), one entry per locale, with a preview of each as a wallet may show it.
 */
export default function IssuerBrandingPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const tenant = useQuery({
    queryKey: ['tenant', tenantId],
    queryFn: () => session.api.getTenant(tenantId),
  })
  return (
    <Stack>
      <PageTitle title={`Issuer branding of ${tenantId}`} />
      <Text c="dimmed">
        What wallets show of the issuer: its name and logo per language, in the issuer metadata. Without an
        entry, wallets see the tenant’s name.
      </Text>
      {tenant.error ? (
        <Alert color="red" role="alert">
          {describeError(tenant.error)}
        </Alert>
      ) : tenant.data ? (
        <BrandingForm key={tenant.data.id} tenant={tenant.data} />
      ) : (
        <Busy label="Loading" />
      )}
    </Stack>
  )
}

function BrandingForm({ tenant }: { tenant: Tenant }) {
  const session = useSession()
  const queryClient = useQueryClient()
  const writable = canWrite(session, 'issuer-branding')
  const [saved, setSaved] = useState(false)
  const { form, onSubmit, pending } = useApiForm({
    initialValues: { issuerDisplay: (tenant.issuerDisplay ?? []).map(valuesOf) },
    fields: (values) =>
      values.issuerDisplay.flatMap((_, index) => MEMBERS.map((member) => `issuerDisplay.${index}.${member}`)),
    schema: zTenantUpdate,
    toBody: (values): TenantUpdate => ({
      issuerDisplay: values.issuerDisplay.length ? values.issuerDisplay.map(entryOf) : null,
    }),
    submit: (body) => session.api.updateTenant(tenant.id, body),
    onDone: (updated) => {
      setSaved(true)
      queryClient.setQueryData(['tenant', tenant.id], updated)
      // The form goes on from what was saved (useApiForm resets it to its first values).
      const values = { issuerDisplay: (updated.issuerDisplay ?? []).map(valuesOf) }
      form.setInitialValues(values)
      form.setValues(values)
    },
  })
  const entries = form.values.issuerDisplay
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        {entries.map((entry, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: entries have no id; the index is their place
          <Card key={index} withBorder component="fieldset" aria-label={`Display entry ${index + 1}`}>
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <Stack gap="xs">
                <Group grow>
                  <TextInput
                    label="Locale"
                    description="BCP 47, e.g. en or de-DE"
                    {...form.getInputProps(`issuerDisplay.${index}.locale`)}
                  />
                  <TextInput label="Name" {...form.getInputProps(`issuerDisplay.${index}.name`)} />
                </Group>
                <TextInput label="Logo URL" {...form.getInputProps(`issuerDisplay.${index}.logo.uri`)} />
                <TextInput
                  label="Logo alternative text"
                  {...form.getInputProps(`issuerDisplay.${index}.logo.alt_text`)}
                />
                <Group grow>
                  <TextInput
                    label="Background colour"
                    placeholder="#12107c"
                    {...form.getInputProps(`issuerDisplay.${index}.background_color`)}
                  />
                  <TextInput
                    label="Text colour"
                    placeholder="#ffffff"
                    {...form.getInputProps(`issuerDisplay.${index}.text_color`)}
                  />
                </Group>
                {writable && (
                  <Group>
                    <LogoUpload
                      tenantId={tenant.id}
                      index={index}
                      onUploaded={(uri) => form.setFieldValue(`issuerDisplay.${index}.logo.uri`, uri)}
                    />
                    <Button
                      variant="subtle"
                      color="red"
                      onClick={() => form.removeListItem('issuerDisplay', index)}
                    >
                      Remove entry {index + 1}
                    </Button>
                  </Group>
                )}
              </Stack>
              <Preview entry={entry} fallbackName={tenant.name} />
            </SimpleGrid>
          </Card>
        ))}
        {writable && (
          <Group>
            <Button variant="default" onClick={() => form.insertListItem('issuerDisplay', emptyEntry())}>
              Add display entry
            </Button>
            <Button type="submit" loading={pending} onClick={() => setSaved(false)}>
              Save branding
            </Button>
          </Group>
        )}
        <FormAlert message={form.errors['']} />
        {saved && (
          <Alert color="green" role="status">
            Saved: the issuer metadata shows it now.
          </Alert>
        )}
      </Stack>
    </form>
  )
}

/** An image file sent to `POST /api/tenants/{id}/logos`; its served URL fills the entry's logo. */
function LogoUpload(props: { tenantId: string; index: number; onUploaded: (uri: string) => void }) {
  const { api } = useSession()
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const upload = async (file: File | null) => {
    if (!file) return
    setError(undefined)
    setBusy(true)
    try {
      const bytes = new Uint8Array(await file.arrayBuffer())
      let binary = ''
      for (const byte of bytes) binary += String.fromCharCode(byte)
      const logo = await api.uploadLogo(props.tenantId, {
        contentType: file.type as (typeof LOGO_CONTENT_TYPES)[number],
        data: btoa(binary),
      })
      props.onUploaded(logo.uri)
    } catch (caught) {
      setError(describeError(caught))
    } finally {
      setBusy(false)
    }
  }
  return (
    <>
      <FileButton onChange={(file) => void upload(file)} accept={LOGO_CONTENT_TYPES.join(',')}>
        {(button) => (
          <Button variant="default" loading={busy} {...button}>
            Upload logo {props.index + 1}
          </Button>
        )}
      </FileButton>
      {error && (
        <Text c="red" size="sm" role="alert">
          {error}
        </Text>
      )}
    </>
  )
}

/**
 * The entry as a wallet may show it. Logos the service serves are shown; another site's are not
 * loaded here (the console's policy allows images from its own origin only).
 */
function Preview({ entry, fallbackName }: { entry: EntryValues; fallbackName: string }) {
  const uri = entry.logo.uri.trim()
  const own = uri.startsWith(`${window.location.origin}/`)
  const colour = (value: string) =>
    /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(value.trim()) ? value.trim() : undefined
  return (
    <Paper
      p="md"
      radius="md"
      withBorder
      aria-label="Preview"
      bg={colour(entry.background_color) ?? 'var(--mantine-color-body)'}
      c={colour(entry.text_color)}
    >
      <Text size="xs">Preview{entry.locale ? ` (${entry.locale})` : ''}</Text>
      <Group mt="xs">
        {uri && own && <Image src={uri} alt={entry.logo.alt_text} h={48} w="auto" fit="contain" />}
        {uri && !own && <Text size="sm">Logo from {safeHost(uri)} (not loaded here)</Text>}
        <Title order={2} size="h3">
          {entry.name.trim() || fallbackName}
        </Title>
      </Group>
    </Paper>
  )
}

function safeHost(uri: string): string {
  try {
    return new URL(uri).host
  } catch {
    return 'another site'
  }
}
