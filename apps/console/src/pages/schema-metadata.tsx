import {
  type SchemaMetadataSign,
  type SchemaMetadataSignVersion,
  zSchemaMetadataSign,
  zSchemaMetadataSignVersion,
} from '@credential-service/core-domain'
import type { SignedSchemaMetadata, SignedSchemaMetadataVersion } from '@credential-service/sdk'
import {
  Autocomplete,
  Button,
  Card,
  Code,
  CopyButton,
  Grid,
  Group,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useState } from 'react'
import { canRead } from '../access'
import { useSession } from '../auth/auth'
import { downloadText } from '../components/download'
import { FieldTable, TokenBlock } from '../components/field-table'
import { FormAlert } from '../components/form-alert'
import { JsonBlock } from '../components/json-block'
import { useReferenceIds } from '../components/reference-ids'
import { PageTitle } from '../components/shell'
import { optional, useApiForm } from '../forms/use-api-form'

type Signed = SignedSchemaMetadata | SignedSchemaMetadataVersion

/** The metadata text as JSON: undefined when empty; the text itself when it is no JSON (refused). */
function metadataOf(text: string): { value: unknown; error?: string } {
  if (text.trim() === '') return { value: undefined }
  try {
    return { value: JSON.parse(text) }
  } catch (error) {
    return { value: text, error: `Not JSON: ${(error as Error).message}` }
  }
}

/**
 * [Experimental] SD-JWT VC type metadata signed with a key chain (`/schema-metadata/sign` and
 * `/sign-version`): derived from a credential configuration, given as JSON, or both; the signed
 * JWS, the document and its `vct#integrity`, with downloads.
 */
export default function SchemaMetadataPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const [signed, setSigned] = useState<Signed>()
  // Which operation, and so which of the API's schemas the form is checked with.
  const [versioned, setVersioned] = useState(false)
  const references = {
    configs: useReferenceIds(
      ['credential-configs', tenantId],
      (query) => session.api.listCredentialConfigsOfTenant(tenantId, query),
      true,
    ),
    keyChains: useReferenceIds(
      ['key-chains', tenantId],
      (query) => session.api.listKeyChainsOfTenant(tenantId, query),
      canRead(session, 'key-chains'),
    ),
  }
  const { form, onSubmit, pending } = useApiForm({
    success: 'Signed',
    initialValues: {
      credentialConfigId: '',
      keyChainId: '',
      metadata: '',
      version: '',
      previousIntegrity: '',
    },
    fields: ['credentialConfigId', 'keyChainId', 'metadata', 'version', 'previousIntegrity'],
    schema: versioned ? zSchemaMetadataSignVersion : zSchemaMetadataSign,
    toBody: (values): SchemaMetadataSign | SchemaMetadataSignVersion => ({
      credentialConfigId: optional(values.credentialConfigId),
      keyChainId: optional(values.keyChainId),
      metadata: metadataOf(values.metadata).value as SchemaMetadataSign['metadata'],
      ...(versioned
        ? { version: values.version.trim(), previousIntegrity: optional(values.previousIntegrity) }
        : {}),
    }),
    submit: (body) => {
      // The inputs stay after a signature (the form resets to its initial values).
      form.setInitialValues(form.getValues())
      return versioned
        ? session.api.signSchemaMetadataVersionOfTenant(tenantId, body as SchemaMetadataSignVersion)
        : // The console sends `metadata` (SD-JWT VC type metadata), whose answer is that form's;
          // the TS11 `config` form answers another shape.
          session.api
            .signSchemaMetadataOfTenant(tenantId, body)
            .then((result) => result as SignedSchemaMetadata)
    },
    onDone: (result: Signed) => {
      setSigned(result)
      // The next version follows this one.
      if ('version' in result) form.setFieldValue('previousIntegrity', result.integrity)
    },
  })
  const metadata = metadataOf(form.values.metadata)
  return (
    <Stack>
      <PageTitle title={`Schema metadata of ${tenantId}`} />
      <Text c="dimmed" size="sm">
        Experimental: signs SD-JWT VC type metadata as a JWS with a key chain. Nothing is stored, except the
        version and integrity of a signed version.
      </Text>
      <Grid>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <form onSubmit={onSubmit} noValidate aria-label="Sign schema metadata">
            <Stack>
              <Switch
                label="Sign a new version (version and the previous version's integrity)"
                checked={versioned}
                onChange={(event) => setVersioned(event.currentTarget.checked)}
              />
              <Autocomplete
                label="Credential configuration"
                description="An SD-JWT VC configuration to derive the document from (vct, display, claims, schema)"
                data={references.configs}
                {...form.getInputProps('credentialConfigId')}
              />
              <Autocomplete
                label="Key chain"
                description="Empty: the configuration's key chain"
                data={references.keyChains}
                {...form.getInputProps('keyChainId')}
              />
              <Textarea
                label="Type metadata (JSON)"
                description="Members given here replace derived ones; without a configuration it needs vct"
                autosize
                minRows={5}
                maxRows={20}
                styles={{ input: { fontFamily: 'monospace' } }}
                {...form.getInputProps('metadata')}
                error={metadata.error ?? form.errors.metadata}
              />
              {versioned && (
                <>
                  <TextInput
                    label="Version"
                    required
                    description="Semantic version, e.g. 1.0.0"
                    {...form.getInputProps('version')}
                  />
                  <TextInput
                    label="Previous integrity"
                    description="The latest signed version's integrity (sha256-…); empty for the first version"
                    {...form.getInputProps('previousIntegrity')}
                  />
                </>
              )}
              <FormAlert message={form.errors['']} title="Not signed" />
              <Button type="submit" loading={pending}>
                {versioned ? 'Sign version' : 'Sign'}
              </Button>
            </Stack>
          </form>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 7 }}>{signed && <SignedResult signed={signed} />}</Grid.Col>
      </Grid>
    </Stack>
  )
}

function SignedResult({ signed }: { signed: Signed }) {
  const name = signed.metadata.vct.replace(/[^A-Za-z0-9._-]+/g, '_')
  const rows: [string, string][] = [
    ['vct', signed.metadata.vct],
    ['Key chain', `${signed.keyChainId} (${signed.kid}, ${signed.alg})`],
    ['Signed', new Date(signed.signedAt).toLocaleString()],
    ...('version' in signed
      ? ([
          ['Version', signed.version],
          ['Previous version', signed.previousVersion ?? 'none'],
        ] as [string, string][])
      : []),
  ]
  return (
    <Card withBorder data-testid="signed-metadata">
      <Stack>
        <Title order={2} size="h4">
          Signed
        </Title>
        <FieldTable
          label="Signature"
          rows={[
            ...rows,
            [
              'Integrity (vct#integrity)',
              <Group key="integrity" gap="xs">
                <Code data-testid="metadata-integrity">{signed.integrity}</Code>
                <CopyButton value={signed.integrity}>
                  {({ copied, copy }) => (
                    <Button size="xs" variant="default" onClick={copy}>
                      {copied ? 'Copied' : 'Copy'}
                    </Button>
                  )}
                </CopyButton>
              </Group>,
            ],
          ]}
        />
        <Group>
          <Button
            variant="default"
            onClick={() => downloadText(`${name}.jwt`, signed.jws, 'application/jwt')}
          >
            Download JWS
          </Button>
          <Button
            variant="default"
            onClick={() =>
              downloadText(
                `${name}.json`,
                `${JSON.stringify(signed.metadata, null, 2)}\n`,
                'application/json',
              )
            }
          >
            Download document
          </Button>
        </Group>
        <Text size="sm" fw={500}>
          JWS
        </Text>
        <TokenBlock label="Signed JWS" testId="metadata-jws" token={signed.jws} />
        <JsonBlock label="Signed document" testId="metadata-document" value={signed.metadata} />
      </Stack>
    </Card>
  )
}
