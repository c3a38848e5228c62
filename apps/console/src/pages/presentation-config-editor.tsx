import {
  checkDcApiSettings,
  checkDcqlQuery,
  type PresentationConfigInput,
  zDcApiProtocol,
  zPresentationConfigInput,
} from '@credential-service/core-domain'
import type { PresentationConfig } from '@credential-service/sdk'
import {
  Autocomplete,
  Button,
  Checkbox,
  Fieldset,
  Grid,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Textarea,
  TextInput,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { Link, useNavigate, useParams } from 'react-router'
import { canRead, canWrite } from '../access'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { FormAlert } from '../components/form-alert'
import { JsonBlock } from '../components/json-block'
import { useReferenceIds } from '../components/reference-ids'
import { PageTitle } from '../components/shell'
import { StoredItem } from '../components/stored-item'
import { useApiForm } from '../forms/use-api-form'
import { DcqlEditor } from '../presentation-configs/dcql-editor'
import {
  dcApiOriginsError,
  defaultDcApiProtocols,
  presentationBody,
  presentationFields,
  presentationValues,
} from '../presentation-configs/presentation-values'
import { presentationConfigsApi } from './configs-api'

/** `/presentation-configs/new` and `/presentation-configs/:presentationConfigId/edit`. */
export default function PresentationConfigEditorPage() {
  const { presentationConfigId } = useParams()
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  return (
    <StoredItem
      id={presentationConfigId}
      queryKey={['presentation-configs', tenantId]}
      load={presentationConfigsApi(session.api, tenantId).get}
      listPath="/presentation-configs"
    >
      {(stored) => <PresentationConfigEditor stored={stored} />}
    </StoredItem>
  )
}

function PresentationConfigEditor({ stored }: { stored?: PresentationConfig }) {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const presentations = presentationConfigsApi(session.api, tenantId)
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const readOnly = !canWrite(session, 'presentation-configs')
  // The builder's choices: the tenant's credential configurations, when the roles can read them.
  const credentialConfigs = useQuery({
    queryKey: ['credential-configs', tenantId, 'for-dcql'],
    queryFn: () => session.api.listCredentialConfigsOfTenant(tenantId, { limit: 100 }),
    enabled: canRead(session, 'credential-configs'),
  })
  const keyChains = useReferenceIds(
    ['key-chains', tenantId],
    (query) => session.api.listKeyChainsOfTenant(tenantId, query),
    canRead(session, 'key-chains'),
  )
  const trustLists = useReferenceIds(
    ['trust-lists', tenantId],
    (query) => session.api.listTrustListsOfTenant(tenantId, query),
    canRead(session, 'trust-lists'),
  )
  const { form, onSubmit, pending } = useApiForm({
    initialValues: presentationValues(stored),
    fields: presentationFields,
    schema: zPresentationConfigInput,
    toBody: presentationBody,
    check: (body: PresentationConfigInput) => {
      const config = zPresentationConfigInput.parse(body)
      // Whether http origins are allowed is the service's setting: the API answers for origins.
      return [
        ...checkDcqlQuery(config.dcqlQuery),
        ...checkDcApiSettings(config, { allowHttp: true }, 'body.dcApi'),
      ]
    },
    submit: (body) => (stored ? presentations.replace(stored.id, body) : presentations.create(body)),
    onDone: () => {
      void queryClient.invalidateQueries({ queryKey: ['presentation-configs', tenantId] })
      navigate('/presentation-configs')
    },
  })
  const origins = form.getInputProps('dcApi.origins')
  const defaults = defaultDcApiProtocols(form.values)
  if (canRead(session, 'credential-configs') && credentialConfigs.isPending)
    return <Busy label="Loading credential configurations" />
  return (
    <Stack>
      <PageTitle
        title={stored ? `Presentation configuration ${stored.id}` : 'New presentation configuration'}
      />
      <Grid>
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <form onSubmit={onSubmit} noValidate aria-label="Presentation configuration">
            <Stack>
              <TextInput
                label="Id"
                required
                readOnly={stored !== undefined || readOnly}
                {...form.getInputProps('id')}
              />
              <Textarea
                label="Description"
                autosize
                minRows={1}
                readOnly={readOnly}
                {...form.getInputProps('description')}
              />
              <DcqlEditor
                value={form.values.dcqlQuery}
                onChange={(text) => form.setFieldValue('dcqlQuery', text)}
                configs={credentialConfigs.data?.items}
                error={form.errors.dcqlQuery}
                readOnly={readOnly}
              />
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <Autocomplete
                  label="Key chain"
                  description="Signs request objects"
                  required
                  data={keyChains}
                  readOnly={readOnly}
                  {...form.getInputProps('keyChainId')}
                />
                <Select
                  label="Client id prefix"
                  data={[
                    { value: 'x509_san_dns', label: 'x509_san_dns (SAN dNSName)' },
                    { value: 'x509_hash', label: 'x509_hash (certificate hash)' },
                    { value: 'redirect_uri', label: 'redirect_uri (unsigned, same-device)' },
                    { value: 'verifier_attestation', label: 'verifier_attestation (attested key)' },
                    { value: 'decentralized_identifier', label: 'decentralized_identifier (did:web)' },
                  ]}
                  allowDeselect={false}
                  readOnly={readOnly}
                  {...form.getInputProps('clientIdPrefix')}
                />
                {form.values.clientIdPrefix === 'verifier_attestation' && (
                  <Textarea
                    label="Verifier attestation"
                    description="The verifier-attestation+jwt issued for this tenant's verifier identifier and the key chain's key"
                    autosize
                    minRows={2}
                    readOnly={readOnly}
                    {...form.getInputProps('verifierAttestation')}
                  />
                )}
                <Select
                  label="Response mode"
                  description="HAIP asks for direct_post.jwt"
                  data={['direct_post.jwt', 'direct_post']}
                  allowDeselect={false}
                  readOnly={readOnly}
                  {...form.getInputProps('responseMode')}
                />
                <NumberInput
                  label="Lifetime (seconds)"
                  description="How long a request stays answerable"
                  min={30}
                  max={86400}
                  readOnly={readOnly}
                  {...form.getInputProps('lifetimeSeconds')}
                />
                <TextInput
                  label="Redirect URI"
                  description="Same-device flows: where the wallet sends the user back"
                  readOnly={readOnly}
                  {...form.getInputProps('redirectUri')}
                />
                <TextInput
                  label="Webhook endpoint"
                  description="Where results are delivered"
                  readOnly={readOnly}
                  {...form.getInputProps('webhookEndpointId')}
                />
              </SimpleGrid>
              <TagsInput
                label="Transaction data types"
                description="Types requests may carry; Enter to add"
                readOnly={readOnly}
                {...form.getInputProps('transactionDataTypes')}
              />
              <MultiSelect
                label="Trust lists"
                description="The tenant's trust lists whose current certificates issuers may chain to, besides the tenant's own key chains (PEM certificates: a pem list)"
                placeholder={form.values.trustListIds.length ? undefined : 'None'}
                // The stored ids stay choosable when the list cannot be read or is longer than a page.
                data={[...new Set([...trustLists, ...form.values.trustListIds])]}
                searchable
                readOnly={readOnly}
                {...form.getInputProps('trustListIds')}
              />
              <Checkbox
                label="Send trusted_authorities from the anchors"
                description="Requests name the trust anchors' key identifiers (trusted_authorities of type aki), so wallets offer only credentials of trusted issuers"
                disabled={readOnly}
                {...form.getInputProps('trustedAuthorities', { type: 'checkbox' })}
              />
              <Checkbox
                label="Accept any issuer (development only)"
                disabled={readOnly}
                {...form.getInputProps('acceptAnyIssuer', { type: 'checkbox' })}
              />
              <Fieldset legend="Digital Credentials API">
                <Stack>
                  <TagsInput
                    label="Allowed origins"
                    description="Web origins (scheme://host[:port]) whose pages may ask for this configuration with the W3C Digital Credentials API; Enter to add. None: any origin"
                    readOnly={readOnly}
                    {...origins}
                    error={dcApiOriginsError(form.errors, form.values.dcApi.origins)}
                    onChange={(value: string[]) => {
                      // A problem of one origin goes with the list as it was.
                      form.values.dcApi.origins.forEach((_, index) => {
                        form.clearFieldError(`dcApi.origins.${index}`)
                      })
                      origins.onChange(value)
                    }}
                  />
                  <MultiSelect
                    label="Protocols"
                    description={`Offered in the order they are chosen in. None: the default order${defaults ? ` (${defaults.join(', ') || 'none fits'})` : ''}`}
                    placeholder={form.values.dcApi.protocols.length ? undefined : 'Default'}
                    data={zDcApiProtocol.options}
                    readOnly={readOnly}
                    {...form.getInputProps('dcApi.protocols')}
                  />
                  <Checkbox
                    label="Reader authentication (Annex C)"
                    description="The org-iso-mdoc DeviceRequest is signed with the key chain (readerAuth, ISO/IEC 18013-5 §9.1.4), its certificates sent along; for wallets that show or require an authenticated reader"
                    disabled={readOnly}
                    {...form.getInputProps('dcApi.readerAuth', { type: 'checkbox' })}
                  />
                </Stack>
              </Fieldset>
              <FormAlert message={form.errors['']} />
              <Group>
                {!readOnly && (
                  <Button type="submit" loading={pending}>
                    {stored ? 'Save configuration' : 'Create configuration'}
                  </Button>
                )}
                <Button variant="default" component={Link} to="/presentation-configs">
                  Cancel
                </Button>
              </Group>
            </Stack>
          </form>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <div style={{ position: 'sticky', top: 72 }}>
            <JsonBlock
              label="Configuration JSON"
              testId="presentation-json"
              value={presentationBody(form.values)}
            />
          </div>
        </Grid.Col>
      </Grid>
    </Stack>
  )
}
