import {
  type CredentialConfigInput,
  checkCredentialConfig,
  deriveClaimsJsonSchema,
  zClaimField,
  zCredentialConfigInput,
} from '@credential-service/core-domain'
import type { CredentialConfig } from '@credential-service/sdk'
import { Alert, Button, FileButton, Grid, Group, Stack, Tabs, Text, Title } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { z } from 'zod'
import { canRead, canWrite } from '../access'
import { useSession } from '../auth/auth'
import { downloadText } from '../components/download'
import { FormAlert } from '../components/form-alert'
import { JsonBlock } from '../components/json-block'
import { useReferenceIds } from '../components/reference-ids'
import { PageTitle } from '../components/shell'
import { StoredItem } from '../components/stored-item'
import { configFile, type FileIssue, readConfigFile } from '../credential-configs/config-file'
import { ConfigIdentity, ConfigSettings } from '../credential-configs/config-settings'
import { configBody, configInputNames, configValues } from '../credential-configs/config-values'
import { FieldEditor } from '../credential-configs/field-editor'
import { useApiForm } from '../forms/use-api-form'
import { credentialConfigsApi } from './configs-api'

/** `/credential-configs/new` and `/credential-configs/:credentialConfigId/edit`. */
export default function CredentialConfigEditorPage() {
  const { credentialConfigId } = useParams()
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  return (
    <StoredItem
      id={credentialConfigId}
      queryKey={['credential-configs', tenantId]}
      load={credentialConfigsApi(session.api, tenantId).get}
      listPath="/credential-configs"
    >
      {(stored) => <CredentialConfigEditor stored={stored} />}
    </StoredItem>
  )
}

const zFields = z.array(zClaimField).min(1)

/**
 * The field editor beside the live JSON of the whole configuration and the JSON Schema derived
 * from its fields (core-domain, the derivation the API serves at `…/schema`); checked with the
 * API's schema and rules before it is sent, and a refusal's problems shown on the inputs they name.
 */
function CredentialConfigEditor({ stored }: { stored?: CredentialConfig }) {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const configs = credentialConfigsApi(session.api, tenantId)
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const readOnly = !canWrite(session, 'credential-configs')
  const [importIssues, setImportIssues] = useState<{ file: string; issues: FileIssue[] }>()
  const { form, onSubmit, pending } = useApiForm({
    initialValues: configValues(stored),
    fields: configInputNames,
    schema: zCredentialConfigInput,
    toBody: configBody,
    check: (body: CredentialConfigInput) => checkCredentialConfig(zCredentialConfigInput.parse(body)),
    submit: (body) => (stored ? configs.replace(stored.id, body) : configs.create(body)),
    onDone: () => {
      void queryClient.invalidateQueries({ queryKey: ['credential-configs', tenantId] })
      navigate('/credential-configs')
    },
  })
  const references = {
    keyChains: useReferenceIds(
      ['key-chains', tenantId],
      (query) => session.api.listKeyChainsOfTenant(tenantId, query),
      canRead(session, 'key-chains'),
    ),
    attributeProviders: useReferenceIds(
      ['attribute-providers', tenantId],
      (query) => session.api.listAttributeProvidersOfTenant(tenantId, query),
      !readOnly,
    ),
    webhookEndpoints: useReferenceIds(
      ['webhook-endpoints', tenantId],
      (query) => session.api.listWebhookEndpointsOfTenant(tenantId, query),
      !readOnly,
    ),
    loginProviders: useReferenceIds(
      ['login-providers', tenantId],
      (query) => session.api.listLoginProvidersOfTenant(tenantId, query),
      !readOnly,
    ),
  }
  const body = configBody(form.values)
  const importFile = async (file: File | null) => {
    if (!file) return
    const read = readConfigFile(await file.text(), file.name)
    if (!read.ok) return setImportIssues({ file: file.name, issues: read.issues })
    setImportIssues(undefined)
    // Editing: the path id wins (PUT), whatever the file says.
    form.setValues(configValues(stored ? { ...read.config, id: stored.id } : read.config))
    form.clearErrors()
  }
  return (
    <Stack>
      <PageTitle title={stored ? `Credential configuration ${stored.id}` : 'New credential configuration'}>
        {!readOnly && (
          <FileButton onChange={(file) => void importFile(file)} accept="application/json,.json">
            {(props) => (
              <Button variant="default" {...props}>
                Import JSON
              </Button>
            )}
          </FileButton>
        )}
        <Button
          variant="default"
          onClick={() => {
            const file = configFile(body)
            downloadText(file.fileName, file.text, 'application/json')
          }}
        >
          Export JSON
        </Button>
      </PageTitle>
      {importIssues && (
        <Alert color="red" title={`${importIssues.file} was not imported`} role="alert">
          {importIssues.issues.map((issue) => (
            <Text key={`${issue.path}:${issue.message}`} size="sm">
              {issue.path ? `${issue.path}: ` : ''}
              {issue.message}
            </Text>
          ))}
        </Alert>
      )}
      <Grid>
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <form onSubmit={onSubmit} noValidate aria-label="Credential configuration">
            <Stack>
              <ConfigIdentity form={form} editing={stored !== undefined} readOnly={readOnly} />
              <Title order={2} size="h4">
                Fields
              </Title>
              <FieldEditor form={form} readOnly={readOnly} />
              <Title order={2} size="h4">
                Issuance
              </Title>
              <ConfigSettings form={form} references={references} readOnly={readOnly} />
              <FormAlert message={form.errors['']} />
              {form.errors.config && <FormAlert message={form.errors.config} />}
              <Group>
                {!readOnly && (
                  <Button type="submit" loading={pending}>
                    {stored ? 'Save configuration' : 'Create configuration'}
                  </Button>
                )}
                <Button variant="default" component={Link} to="/credential-configs">
                  Cancel
                </Button>
              </Group>
            </Stack>
          </form>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <JsonViews body={body} />
        </Grid.Col>
      </Grid>
    </Stack>
  )
}

/** The configuration as it would be sent, and the claims' JSON Schema derived from its fields. */
function JsonViews({ body }: { body: CredentialConfigInput }) {
  const fields = zFields.safeParse(body.fields)
  return (
    <Tabs defaultValue="json" style={{ position: 'sticky', top: 72 }}>
      <Tabs.List>
        <Tabs.Tab value="json">Configuration JSON</Tabs.Tab>
        <Tabs.Tab value="schema">Derived JSON Schema</Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="json" pt="xs">
        <JsonBlock label="Configuration JSON" testId="config-json" value={body} />
      </Tabs.Panel>
      <Tabs.Panel value="schema" pt="xs">
        {fields.success ? (
          <JsonBlock
            label="Derived JSON Schema"
            testId="config-schema"
            value={deriveClaimsJsonSchema({ id: body.id, fields: fields.data })}
          />
        ) : (
          <Text c="dimmed" size="sm">
            The schema is derived once every field is valid: {fields.error.issues[0]?.path.join('.')}{' '}
            {fields.error.issues[0]?.message}
          </Text>
        )}
      </Tabs.Panel>
    </Tabs>
  )
}
