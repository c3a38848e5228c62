import {
  type AttributeProviderInput,
  WEBHOOK_EVENT_TYPES,
  type WebhookEndpointInput,
  zAttributeProviderInput,
  zWebhookEndpointInput,
} from '@credential-service/core-domain'
import type { AttributeProvider, WebhookEndpoint } from '@credential-service/sdk'
import {
  Button,
  MultiSelect,
  NumberInput,
  PasswordInput,
  Select,
  Stack,
  Textarea,
  TextInput,
} from '@mantine/core'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'

type AuthType = 'none' | 'api-key' | 'hmac'

interface EndpointValues extends Record<string, unknown> {
  id: string
  description: string
  url: string
  auth: { type: AuthType; headerName: string; value: string; secret: string }
  /** Attribute providers only. */
  timeoutMs: number | string
  /** Webhook endpoints only: none picked is every event. */
  events: string[]
}

const COMMON_FIELDS = ['id', 'description', 'url', 'auth', 'auth.type', 'auth.headerName', 'auth.value']

/** What an endpoint form sends: an attribute provider's or a webhook endpoint's definition. */
type Kind =
  | { kind: 'attribute-provider'; stored: AttributeProvider | undefined }
  | { kind: 'webhook-endpoint'; stored: WebhookEndpoint | undefined }

function valuesOf({ kind, stored }: Kind): EndpointValues {
  return {
    id: stored?.id ?? '',
    description: stored?.description ?? '',
    url: stored?.url ?? '',
    auth: {
      type: stored?.auth.type ?? 'none',
      headerName: stored?.auth.type === 'api-key' ? stored.auth.headerName : 'x-api-key',
      value: '',
      secret: '',
    },
    timeoutMs: kind === 'attribute-provider' ? (stored?.timeoutMs ?? 5000) : '',
    events: kind === 'webhook-endpoint' ? (stored?.events ?? []) : [],
  }
}

function authBody(auth: EndpointValues['auth']): AttributeProviderInput['auth'] {
  if (auth.type === 'api-key')
    return { type: 'api-key', headerName: auth.headerName.trim() || undefined, value: auth.value }
  if (auth.type === 'hmac') return { type: 'hmac', secret: optional(auth.secret) }
  return { type: 'none' }
}

function commonBody(values: EndpointValues) {
  return {
    id: values.id.trim(),
    description: optional(values.description),
    url: values.url.trim(),
    auth: authBody(values.auth),
  }
}

/**
 * Create or replace (PUT) an attribute provider or a webhook endpoint, checked with the API's
 * schema; an API key is never shown again, so an edit asks for it anew; an HMAC secret left
 * empty is generated (and shown once) or, on an edit of an HMAC endpoint, kept.
 */
export function EndpointForm<Saved>(
  props: Kind & {
    /** The collection's create or replace (the body is of `kind`). */
    submit: (body: never) => Promise<Saved>
    onSaved: (saved: Saved) => void
  },
) {
  const { kind, stored, submit, onSaved } = props
  const attribute = kind === 'attribute-provider'
  const { form, onSubmit, pending } = useApiForm({
    initialValues: valuesOf(props),
    fields: [...COMMON_FIELDS, 'auth.secret', attribute ? 'timeoutMs' : 'events'],
    schema: attribute ? zAttributeProviderInput : zWebhookEndpointInput,
    toBody: (values: EndpointValues): AttributeProviderInput | WebhookEndpointInput =>
      attribute
        ? {
            ...commonBody(values),
            timeoutMs: values.timeoutMs === '' ? undefined : Number(values.timeoutMs),
          }
        : { ...commonBody(values), events: values.events.length > 0 ? values.events : undefined },
    submit: (body) => submit(body as never),
    onDone: onSaved,
  })
  const authType = form.values.auth.type
  const storedHmac = stored?.auth.type === 'hmac'
  return (
    <form onSubmit={onSubmit} noValidate aria-label={attribute ? 'Attribute provider' : 'Webhook endpoint'}>
      <Stack>
        <TextInput
          label="Id"
          required
          disabled={stored !== undefined}
          description="Letters, digits, -, _ and ."
          {...form.getInputProps('id')}
        />
        <Textarea label="Description" autosize minRows={2} {...form.getInputProps('description')} />
        <TextInput
          label="URL"
          required
          description={
            attribute
              ? 'Called with the offer’s claims request; https, a public host'
              : 'Events are POSTed here; https, a public host'
          }
          {...form.getInputProps('url')}
        />
        {attribute ? (
          <NumberInput
            label="Timeout (ms)"
            min={100}
            max={30_000}
            step={500}
            // Out of range is the API schema's message, not a silent clamp.
            clampBehavior="none"
            {...form.getInputProps('timeoutMs')}
          />
        ) : (
          <MultiSelect
            label="Events"
            description="None picked: every event"
            data={[...WEBHOOK_EVENT_TYPES]}
            clearable
            {...form.getInputProps('events')}
          />
        )}
        <Select
          label="Authentication"
          allowDeselect={false}
          data={[
            { value: 'none', label: 'None' },
            { value: 'api-key', label: 'API key in a header' },
            { value: 'hmac', label: 'HMAC-SHA256 signature' },
          ]}
          {...form.getInputProps('auth.type')}
        />
        {authType === 'api-key' && (
          <>
            <TextInput label="Header name" {...form.getInputProps('auth.headerName')} />
            <PasswordInput
              label="API key"
              required
              description={
                stored ? 'Stored encrypted and never shown: enter it again to save' : 'Stored encrypted'
              }
              {...form.getInputProps('auth.value')}
            />
          </>
        )}
        {authType === 'hmac' && (
          <PasswordInput
            label="Signing secret"
            description={
              storedHmac
                ? 'Empty: the stored secret is kept'
                : 'Your own secret (32 characters or more); empty: one is generated and shown once'
            }
            {...form.getInputProps('auth.secret')}
          />
        )}
        <FormAlert message={form.errors[''] ?? form.errors.auth} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save' : 'Create'}
        </Button>
      </Stack>
    </form>
  )
}
