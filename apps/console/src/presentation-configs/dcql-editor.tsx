import { credentialTypeOf, dcqlMetaOf, formatSpec } from '@credential-service/core-domain'
import {
  Alert,
  Button,
  Checkbox,
  Fieldset,
  Group,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core'
import { useState } from 'react'
import {
  buildDcql,
  type CredentialPick,
  checkDcqlText,
  claimOptions,
  metaText,
  type PickableConfig,
  picksOf,
  queryIdFor,
} from './dcql-builder'

export interface DcqlEditorProps {
  /** The query as JSON text (the form's value). */
  value: string
  onChange: (text: string) => void
  /** The tenant's credential configurations; undefined when the roles cannot read them. */
  configs: PickableConfig[] | undefined
  /** A problem the API or the form's check named on `dcqlQuery`. */
  error?: React.ReactNode
  readOnly: boolean
}

const format = (picks: CredentialPick[], configs: PickableConfig[]) =>
  JSON.stringify(buildDcql(picks, configs), null, 2)

/**
 * The DCQL query (OpenID4VP 1.0 §6) of a presentation configuration: built by picking the tenant's
 * credential configurations and ticking their claims, or typed as JSON; either way checked as it
 * changes with the API's schema and rules (core-domain zDcqlQuery, checkDcqlQuery).
 */
export function DcqlEditor({ value, onChange, configs, error, readOnly }: DcqlEditorProps) {
  // The mode is chosen once, for the query the editor opens with (the page waits for `configs`).
  const [initial] = useState(() => {
    if (!configs) return undefined
    if (value.trim() === '') return []
    const checked = checkDcqlText(value)
    return checked.ok ? picksOf(checked.query, configs) : undefined
  })
  const [mode, setMode] = useState<'builder' | 'json'>(initial ? 'builder' : 'json')
  const [picks, setPicks] = useState<CredentialPick[]>(initial ?? [])
  const [notice, setNotice] = useState<string>()
  const checked = value.trim() === '' ? undefined : checkDcqlText(value)

  const update = (next: CredentialPick[]) => {
    setPicks(next)
    if (configs) onChange(next.length ? format(next, configs) : '')
  }
  const switchMode = (next: string) => {
    setNotice(undefined)
    if (next === 'json') return setMode('json')
    if (!configs)
      return setNotice('Your roles cannot read credential configurations: the builder needs them.')
    if (value.trim() === '') {
      setPicks([])
      return setMode('builder')
    }
    const parsed = checkDcqlText(value)
    const back = parsed.ok ? picksOf(parsed.query, configs) : undefined
    if (!back)
      return setNotice(
        'The builder cannot show this query whole (an unknown type, claim values or ids, claim or credential sets, or an invalid query): edit it as JSON.',
      )
    setPicks(back)
    setMode('builder')
  }

  return (
    <Fieldset legend="DCQL query" p="sm">
      <Stack gap="sm">
        <SegmentedControl
          aria-label="DCQL editing mode"
          value={mode}
          onChange={switchMode}
          data={[
            { value: 'builder', label: 'Pick claims' },
            { value: 'json', label: 'Edit JSON' },
          ]}
        />
        {notice && (
          <Alert color="yellow" role="status">
            {notice}
          </Alert>
        )}
        {mode === 'builder' && configs ? (
          <Builder picks={picks} configs={configs} onChange={update} readOnly={readOnly} />
        ) : (
          <Textarea
            label="DCQL JSON"
            description="OpenID4VP 1.0 §6: credentials[], optional credential_sets[]"
            autosize
            minRows={8}
            maxRows={30}
            styles={{ input: { fontFamily: 'monospace' } }}
            readOnly={readOnly}
            value={value}
            onChange={(event) => onChange(event.currentTarget.value)}
          />
        )}
        <DcqlStatus checked={checked} error={error} />
      </Stack>
    </Fieldset>
  )
}

/** Whether the query is valid, announced politely as it changes. */
function DcqlStatus({
  checked,
  error,
}: {
  checked: ReturnType<typeof checkDcqlText> | undefined
  error?: React.ReactNode
}) {
  return (
    <div aria-live="polite" data-testid="dcql-status">
      {error && (
        <Text c="red" size="sm" role="alert">
          {error}
        </Text>
      )}
      {checked === undefined ? (
        <Text size="sm" c="dimmed">
          No query yet: add a credential query.
        </Text>
      ) : checked.ok ? (
        <Text size="sm" fw={500}>
          Valid DCQL query: {checked.query.credentials.length} credential quer
          {checked.query.credentials.length === 1 ? 'y' : 'ies'}.
        </Text>
      ) : (
        checked.issues.map((issue) => (
          <Text key={`${issue.path}:${issue.message}`} c="red" size="sm">
            {issue.path || 'DCQL'}: {issue.message}
          </Text>
        ))
      )}
    </div>
  )
}

function Builder({
  picks,
  configs,
  onChange,
  readOnly,
}: {
  picks: CredentialPick[]
  configs: PickableConfig[]
  onChange: (picks: CredentialPick[]) => void
  readOnly: boolean
}) {
  const set = (index: number, change: Partial<CredentialPick>) =>
    onChange(picks.map((pick, i) => (i === index ? { ...pick, ...change } : pick)))
  const add = () => {
    const config = configs[0]
    if (!config) return
    const queryId = queryIdFor(
      config.id,
      picks.map((pick) => pick.queryId),
    )
    onChange([...picks, { queryId, configId: config.id, claims: [], retain: [], multiple: false }])
  }
  if (configs.length === 0)
    return (
      <Alert color="blue" role="status">
        The tenant has no credential configuration yet: create one, or edit the query as JSON.
      </Alert>
    )
  return (
    <Stack gap="sm">
      {picks.map((pick, index) => {
        const config = configs.find((candidate) => candidate.id === pick.configId)
        const spec = config ? formatSpec(config.config.format) : undefined
        return (
          <Fieldset key={index} legend={`Credential query ${index + 1}`} p="sm">
            <Stack gap="xs">
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <Select
                  label="Credential configuration"
                  data={configs.map((candidate) => ({
                    value: candidate.id,
                    label: `${candidate.id} (${candidate.config.format})`,
                  }))}
                  allowDeselect={false}
                  readOnly={readOnly}
                  value={pick.configId}
                  onChange={(configId) =>
                    configId &&
                    set(index, {
                      configId,
                      queryId: queryIdFor(
                        configId,
                        picks.filter((_, i) => i !== index).map((p) => p.queryId),
                      ),
                      claims: [],
                      retain: [],
                    })
                  }
                />
                <TextInput
                  label="Query id"
                  description="Names the credential in the wallet's answer"
                  readOnly={readOnly}
                  value={pick.queryId}
                  onChange={(event) => set(index, { queryId: event.currentTarget.value })}
                />
              </SimpleGrid>
              {config && (
                <Text size="xs" c="dimmed">
                  {metaText(dcqlMetaOf(config.config.format, [credentialTypeOf(config.config)]))}
                </Text>
              )}
              <Text size="sm" fw={500}>
                Claims to ask for (none: the credential as the wallet presents it)
              </Text>
              {(config ? claimOptions(config) : []).map((option) => (
                <Group key={option.key} gap="lg">
                  <Checkbox
                    label={option.label}
                    disabled={readOnly}
                    checked={pick.claims.includes(option.key)}
                    onChange={(event) =>
                      set(index, {
                        claims: event.currentTarget.checked
                          ? [...pick.claims, option.key]
                          : pick.claims.filter((key) => key !== option.key),
                        retain: event.currentTarget.checked
                          ? pick.retain
                          : pick.retain.filter((key) => key !== option.key),
                      })
                    }
                  />
                  {spec?.intentToRetain && pick.claims.includes(option.key) && (
                    <Checkbox
                      size="xs"
                      label={`Intent to retain ${option.path[1]}`}
                      disabled={readOnly}
                      checked={pick.retain.includes(option.key)}
                      onChange={(event) =>
                        set(index, {
                          retain: event.currentTarget.checked
                            ? [...pick.retain, option.key]
                            : pick.retain.filter((key) => key !== option.key),
                        })
                      }
                    />
                  )}
                </Group>
              ))}
              <Group justify="space-between">
                <Checkbox
                  label="Several credentials of this query (multiple)"
                  disabled={readOnly}
                  checked={pick.multiple}
                  onChange={(event) => set(index, { multiple: event.currentTarget.checked })}
                />
                {!readOnly && (
                  <Button
                    variant="subtle"
                    color="red"
                    size="xs"
                    onClick={() => onChange(picks.filter((_, i) => i !== index))}
                  >
                    Remove credential query {index + 1}
                  </Button>
                )}
              </Group>
            </Stack>
          </Fieldset>
        )
      })}
      {!readOnly && (
        <Button variant="light" onClick={add} w="fit-content">
          Add credential query
        </Button>
      )}
    </Stack>
  )
}
