import type { OfferCreate } from '@credential-service/core-domain'
import { zOfferCreate } from '@credential-service/core-domain'
import type { OfferCreated } from '@credential-service/sdk'
import {
  Alert,
  Button,
  Card,
  Checkbox,
  Code,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core'
import { useForm } from '@mantine/form'
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { useSession } from '../auth/auth'
import { FormAlert } from '../components/form-alert'
import { PageTitle } from '../components/shell'
import { toastDone } from '../components/toast'
import { ClaimsFieldset } from '../flows/claims-fieldset'
import { claimInputsFromFields, claimInputsFromSchema } from '../flows/claims-form'
import { FlowResult } from '../flows/flow-result'
import {
  type ClaimsSource,
  configsWithoutClaims,
  initialOfferValues,
  OFFER_FIELDS,
  type OfferedConfig,
  type OfferValues,
  offerBody,
  offerProblemErrors,
} from '../flows/offer-body'
import { describeError, validateWith } from '../forms/problems'

/** What the page knows of an offered configuration beyond its inputs. */
interface ConfigInfo extends OfferedConfig {
  /** Claims come from the holder's login: grant authorization_code, none in the offer. */
  login: boolean
  /** An attribute provider can give the claims instead of the offer. */
  provider: boolean
}

/**
 * Credential offers (`POST …/offers`): a configuration's claims form generated from its fields,
 * the grant and an optional tx_code; then the QR code, the same-device link, the tx_code once, and
 * the session's status live until the wallet is done.
 */
export default function OffersPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const queryClient = useQueryClient()
  // `issuance:config` reads the configurations and their fields; `issuance:offer` alone gets
  // the claims JSON Schema derived from them, and types the configuration ids.
  const readsConfigs = session.roles.includes('issuance:config')
  const form = useForm<OfferValues>({ mode: 'controlled', initialValues: initialOfferValues() })
  const [sources, setSources] = useState<Record<string, ClaimsSource>>({})
  const [claimErrors, setClaimErrors] = useState<Record<string, Record<number, string>>>({})
  const [created, setCreated] = useState<OfferCreated>()

  const list = useQuery({
    queryKey: ['credential-configs', tenantId, 'offer-picker'],
    queryFn: () => session.api.listCredentialConfigsOfTenant(tenantId, { limit: 100 }),
    enabled: readsConfigs,
  })
  const ids = form.values.credentialConfigurationIds
  const details = useQueries({
    queries: ids.map((id) => ({
      queryKey: ['credential-configs', tenantId, 'offer-form', id, readsConfigs],
      queryFn: async (): Promise<ConfigInfo> => {
        if (!readsConfigs) {
          const schema = await session.api.getCredentialClaimsSchemaOfTenant(tenantId, id)
          return { inputs: claimInputsFromSchema(schema), login: false, provider: true }
        }
        const config = await session.api.getCredentialConfigOfTenant(tenantId, id)
        return {
          inputs: claimInputsFromFields(config.fields),
          fields: config.fields,
          login: config.userAuthentication !== undefined,
          provider: config.attributeProviderId !== undefined,
        }
      },
    })),
  })
  const configs: Record<string, ConfigInfo> = {}
  ids.forEach((id, index) => {
    const data = details[index]?.data
    if (data) configs[id] = data
  })
  const sourceOf = (id: string): ClaimsSource => {
    const config = configs[id]
    const chosen = sources[id]
    if (config?.login) return { kind: 'none' }
    return chosen ?? { kind: 'form', texts: config?.inputs.map((input) => input.initial) ?? [] }
  }
  const effectiveSources = Object.fromEntries(ids.map((id) => [id, sourceOf(id)]))

  const mutation = useMutation({
    mutationFn: (body: OfferCreate) => session.api.createOfferOfTenant(tenantId, body),
    onMutate: () => setCreated(undefined),
    onError: (error) => {
      const mapped = offerProblemErrors(error, configs)
      form.setErrors(mapped.form)
      setClaimErrors(mapped.claims)
    },
    onSuccess: (result) => {
      setCreated(result)
      toastDone('Offer created')
      void queryClient.invalidateQueries({ queryKey: ['sessions', tenantId] })
    },
  })

  // An offer the form gives no claims for, waiting for "Create without claims".
  const [unconfirmed, setUnconfirmed] = useState<{ body: OfferCreate; ids: string[] }>()
  const submit = form.onSubmit((values) => {
    const { body, claimErrors: errors } = offerBody(values, effectiveSources, configs)
    const formErrors = validateWith(zOfferCreate, body, OFFER_FIELDS)
    form.setErrors(formErrors)
    setClaimErrors(errors)
    setUnconfirmed(undefined)
    if (Object.keys(formErrors).length > 0 || Object.keys(errors).length > 0) return
    const empty = configsWithoutClaims(body, effectiveSources)
    if (empty.length > 0) setUnconfirmed({ body, ids: empty })
    else mutation.mutate(body)
  })

  const setText = (id: string, index: number, text: string) =>
    setSources((all) => {
      const current = sourceOf(id)
      const texts = current.kind === 'form' ? [...current.texts] : []
      texts[index] = text
      return { ...all, [id]: { kind: 'form', texts } }
    })
  const loginOnly = ids.length > 0 && ids.every((id) => configs[id]?.login)

  return (
    <Stack>
      <PageTitle title={`Offers of ${tenantId}`} />
      <Card withBorder>
        <form onSubmit={submit} noValidate aria-label="Create an offer">
          <Stack>
            {readsConfigs ? (
              <MultiSelect
                label="Credential configurations"
                description="What the wallet is offered; each gets a claims form below."
                required
                searchable
                data={(list.data?.items ?? []).map((config) => ({
                  value: config.id,
                  label: `${config.id} (${config.config.format})`,
                }))}
                nothingFoundMessage={list.isPending ? 'Loading…' : 'No credential configuration'}
                {...form.getInputProps('credentialConfigurationIds')}
              />
            ) : (
              <TagsInput
                label="Credential configurations"
                description="Configuration ids, Enter after each; their claims forms follow."
                required
                {...form.getInputProps('credentialConfigurationIds')}
              />
            )}
            {ids.map((id, index) => {
              const detail = details[index]
              const config = configs[id]
              if (detail?.isError)
                return (
                  <Alert key={id} color="red" title={`Configuration ${id}`} role="alert">
                    {describeError(detail.error)}
                  </Alert>
                )
              if (!config) return <Text key={id}>Loading the fields of {id}…</Text>
              if (config.login)
                return (
                  <Alert key={id} color="blue" title={`Claims of ${id}`}>
                    The holder logs in to get this credential; the login gives its claims (grant
                    authorization_code).
                  </Alert>
                )
              const source = sourceOf(id)
              return (
                <Stack key={id} gap="xs">
                  {config.provider && (
                    <Checkbox
                      label={`Let the attribute provider of ${id} give its claims`}
                      checked={source.kind === 'none'}
                      onChange={(event) =>
                        setSources((all) => ({
                          ...all,
                          [id]: event.currentTarget.checked
                            ? { kind: 'none' }
                            : { kind: 'form', texts: config.inputs.map((input) => input.initial) },
                        }))
                      }
                    />
                  )}
                  {source.kind === 'form' && (
                    <ClaimsFieldset
                      legend={`Claims of ${id}`}
                      inputs={config.inputs}
                      texts={source.texts}
                      errors={claimErrors[id]}
                      onChange={(input, text) => setText(id, input, text)}
                    />
                  )}
                </Stack>
              )
            })}
            <SimpleGrid cols={{ base: 1, sm: 3 }}>
              <Select
                label="Grant"
                allowDeselect={false}
                data={[
                  { value: 'pre-authorized_code', label: 'Pre-authorized code' },
                  { value: 'authorization_code', label: 'Authorization code' },
                  { value: 'both', label: 'Both' },
                ]}
                {...form.getInputProps('grant')}
              />
              <NumberInput
                label="Lifetime (seconds)"
                min={60}
                max={86_400}
                {...form.getInputProps('lifetimeSeconds')}
              />
              <TextInput
                label="Status handle"
                description="Your reference to revoke these credentials later; never personal data."
                {...form.getInputProps('statusHandle')}
              />
            </SimpleGrid>
            <Checkbox
              label="Offer by reference (credential_offer_uri)"
              {...form.getInputProps('byReference', { type: 'checkbox' })}
            />
            {loginOnly && form.values.grant !== 'authorization_code' && (
              <Text size="sm" c="orange">
                A configuration with a login needs grant “Authorization code”.
              </Text>
            )}
            <Checkbox
              label="Require a transaction code (tx_code), sent to the holder another way"
              disabled={form.values.grant === 'authorization_code'}
              {...form.getInputProps('txCode.required', { type: 'checkbox' })}
              error={form.errors.txCode}
            />
            {form.values.txCode.required && (
              <SimpleGrid cols={{ base: 1, sm: 4 }}>
                <Select
                  label="Input mode"
                  allowDeselect={false}
                  data={['numeric', 'text']}
                  {...form.getInputProps('txCode.inputMode')}
                />
                <NumberInput label="Length" min={4} max={12} {...form.getInputProps('txCode.length')} />
                <TextInput
                  label="Code"
                  description="Generated and shown once when empty."
                  {...form.getInputProps('txCode.value')}
                />
                <TextInput label="Description for the wallet" {...form.getInputProps('txCode.description')} />
              </SimpleGrid>
            )}
            <FormAlert message={form.errors['']} title="No offer made" />
            {unconfirmed && (
              <Alert color="yellow" title="No claims in this offer" role="alert">
                <Text size="sm">
                  The form gives no claim for {unconfirmed.ids.join(', ')}: the credential would hold none.
                  Fill in claims, or create it anyway.
                </Text>
                <Group mt="sm">
                  <Button
                    variant="default"
                    onClick={() => {
                      mutation.mutate(unconfirmed.body)
                      setUnconfirmed(undefined)
                    }}
                  >
                    Create without claims
                  </Button>
                </Group>
              </Alert>
            )}
            <Group>
              <Button type="submit" loading={mutation.isPending}>
                Create offer
              </Button>
            </Group>
          </Stack>
        </form>
      </Card>
      {created && (
        <FlowResult
          key={created.sessionId}
          what="offer"
          sessionId={created.sessionId}
          uri={created.offerUri}
          expiresAt={created.expiresAt}
        >
          {() =>
            created.txCode && (
              <Alert color="blue" title="Transaction code, shown only this once">
                Give the holder this code another way than the QR code (e.g. by text message):{' '}
                <Code data-testid="tx-code" fz="lg">
                  {created.txCode}
                </Code>
              </Alert>
            )
          }
        </FlowResult>
      )}
    </Stack>
  )
}
