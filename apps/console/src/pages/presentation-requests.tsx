import { type PresentationRequestCreate, zPresentationRequestCreate } from '@credential-service/core-domain'
import type { PresentationRequestCreated } from '@credential-service/sdk'
import {
  Button,
  Card,
  Group,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Textarea,
  TextInput,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { useSession } from '../auth/auth'
import { FormAlert } from '../components/form-alert'
import { PageTitle } from '../components/shell'
import { FlowResult } from '../flows/flow-result'
import { PresentationOutcome } from '../flows/presentation-outcome'
import { optional, useApiForm } from '../forms/use-api-form'

const FIELDS = [
  'presentationConfigId',
  'responseMode',
  'redirectUri',
  'webhookEndpointId',
  'lifetimeSeconds',
  'transactionData',
] as const

/** Transaction data typed as JSON: the array, or the text itself when it is no JSON (the schema says why). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * OpenID4VP presentation requests (`POST …/presentation-requests`) of a presentation
 * configuration: the QR code and link, the session's status live, the disclosed claims once verified.
 */
export default function PresentationRequestsPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const queryClient = useQueryClient()
  const [created, setCreated] = useState<PresentationRequestCreated>()
  // `presentation:config` lists the configurations; `presentation:request` alone types the id.
  const readsConfigs = session.roles.includes('presentation:config')
  const list = useQuery({
    queryKey: ['presentation-configs', tenantId, 'request-picker'],
    queryFn: () => session.api.listPresentationConfigsOfTenant(tenantId, { limit: 100 }),
    enabled: readsConfigs,
  })
  const { form, onSubmit, pending } = useApiForm({
    success: 'Presentation request created',
    initialValues: {
      presentationConfigId: '',
      responseMode: '',
      redirectUri: '',
      webhookEndpointId: '',
      lifetimeSeconds: '' as number | '',
      transactionData: '',
    },
    fields: FIELDS,
    schema: zPresentationRequestCreate,
    toBody: (values): PresentationRequestCreate => ({
      presentationConfigId: values.presentationConfigId,
      // The QR code and link: a Digital Credentials API request is made by the relying party's page.
      transport: 'uri',
      ...(values.responseMode
        ? { responseMode: values.responseMode as PresentationRequestCreate['responseMode'] }
        : {}),
      redirectUri: optional(values.redirectUri),
      webhookEndpointId: optional(values.webhookEndpointId),
      ...(values.lifetimeSeconds === '' ? {} : { lifetimeSeconds: values.lifetimeSeconds }),
      ...(values.transactionData.trim()
        ? {
            transactionData: parseJson(
              values.transactionData,
            ) as PresentationRequestCreate['transactionData'],
          }
        : {}),
    }),
    submit: (body) => {
      setCreated(undefined)
      return session.api.createPresentationRequestOfTenant(tenantId, body)
    },
    onDone: (result) => {
      setCreated(result)
      void queryClient.invalidateQueries({ queryKey: ['sessions', tenantId] })
    },
  })
  return (
    <Stack>
      <PageTitle title={`Presentation requests of ${tenantId}`} />
      <Card withBorder>
        <form onSubmit={onSubmit} noValidate aria-label="Create a presentation request">
          <Stack>
            {readsConfigs ? (
              <Select
                label="Presentation configuration"
                required
                searchable
                data={(list.data?.items ?? []).map((config) => config.id)}
                nothingFoundMessage={list.isPending ? 'Loading…' : 'No presentation configuration'}
                {...form.getInputProps('presentationConfigId')}
              />
            ) : (
              <TextInput
                label="Presentation configuration"
                required
                {...form.getInputProps('presentationConfigId')}
              />
            )}
            <SimpleGrid cols={{ base: 1, sm: 3 }}>
              <Select
                label="Response mode"
                placeholder="The configuration's"
                clearable
                data={['direct_post', 'direct_post.jwt']}
                {...form.getInputProps('responseMode')}
              />
              <NumberInput
                label="Lifetime (seconds)"
                placeholder="The configuration's"
                min={30}
                max={86_400}
                {...form.getInputProps('lifetimeSeconds')}
              />
              <TextInput
                label="Webhook endpoint"
                placeholder="The configuration's"
                {...form.getInputProps('webhookEndpointId')}
              />
            </SimpleGrid>
            <TextInput
              label="Redirect URI"
              description="Same-device flows: where the wallet sends the user back, with a response code that releases the claims."
              {...form.getInputProps('redirectUri')}
            />
            <Textarea
              label="Transaction data"
              description='A JSON array of objects with "type" and "credential_ids" (OpenID4VP §5.1); types the configuration allows.'
              autosize
              minRows={1}
              {...form.getInputProps('transactionData')}
            />
            <FormAlert message={form.errors['']} title="No request made" />
            <Group>
              <Button type="submit" loading={pending}>
                Create presentation request
              </Button>
            </Group>
          </Stack>
        </form>
      </Card>
      {created && (
        <FlowResult
          key={created.sessionId}
          what="presentation request"
          sessionId={created.sessionId}
          uri={created.authorizationRequestUri}
          expiresAt={created.expiresAt}
        >
          {(live) => live?.kind === 'presentation' && <PresentationOutcome session={live} />}
        </FlowResult>
      )}
    </Stack>
  )
}
