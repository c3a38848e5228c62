import { formatSpec, zFieldType } from '@credential-service/core-domain'
import {
  ActionIcon,
  Button,
  Checkbox,
  Fieldset,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
} from '@mantine/core'
import type { UseFormReturnType } from '@mantine/form'
import { type CredentialConfigValues, newFieldRow } from './config-values'

type Form = UseFormReturnType<CredentialConfigValues>

const TEXT_DEFAULT = ['string', 'date', 'date-time']

/**
 * The `fields[]` of a configuration, a fieldset per field (spec §2.3 ClaimFieldDefinitionDto):
 * path, type, mandatory, disclosable, mdoc namespace, labels per locale, default value.
 */
export function FieldEditor({ form, readOnly }: { form: Form; readOnly: boolean }) {
  const { fields, config } = form.values
  // Fields of a namespaced format (mdoc) sit in a namespace and are released element by element.
  const namespaced = formatSpec(config.format).namespacedFields
  const disclosable = formatSpec(config.format).selectiveDisclosure
  return (
    <Stack gap="sm">
      {fields.map((row, index) => {
        const at = `fields.${index}`
        const name = row.path.trim() || 'new field'
        return (
          <Fieldset
            key={index}
            legend={`Field ${index + 1}`}
            aria-label={`Field ${index + 1}: ${name}`}
            p="sm"
          >
            <Stack gap="xs">
              <SimpleGrid cols={{ base: 1, sm: namespaced ? 3 : 2 }}>
                <TextInput
                  label="Path"
                  description={namespaced ? 'Element identifier' : 'Dotted, e.g. address.street'}
                  required
                  readOnly={readOnly}
                  {...form.getInputProps(`${at}.path`)}
                />
                {namespaced && (
                  <TextInput
                    label="Namespace"
                    description="e.g. org.iso.18013.5.1"
                    required
                    readOnly={readOnly}
                    {...form.getInputProps(`${at}.namespace`)}
                  />
                )}
                <Select
                  label="Type"
                  data={zFieldType.options}
                  allowDeselect={false}
                  readOnly={readOnly}
                  {...form.getInputProps(`${at}.type`)}
                />
              </SimpleGrid>
              <Group>
                <Checkbox
                  label="Mandatory"
                  disabled={readOnly}
                  {...form.getInputProps(`${at}.mandatory`, { type: 'checkbox' })}
                />
                {disclosable && (
                  <Checkbox
                    label={
                      namespaced ? 'Disclosable (released on its own)' : 'Disclosable (selective disclosure)'
                    }
                    disabled={readOnly}
                    {...form.getInputProps(`${at}.disclosable`, { type: 'checkbox' })}
                  />
                )}
              </Group>
              <TextInput
                label="Default value"
                description={
                  TEXT_DEFAULT.includes(row.type)
                    ? 'Issued when no other source gives one; empty: none'
                    : 'JSON, e.g. 42, true, ["a"], {"k": 1}; empty: none'
                }
                readOnly={readOnly}
                {...form.getInputProps(`${at}.defaultValue`)}
              />
              <LabelRows form={form} at={at} readOnly={readOnly} />
              {!readOnly && (
                <Group justify="flex-end">
                  <Button
                    variant="subtle"
                    color="red"
                    size="xs"
                    disabled={fields.length === 1}
                    onClick={() => form.removeListItem('fields', index)}
                  >
                    Remove field {index + 1}
                  </Button>
                </Group>
              )}
            </Stack>
          </Fieldset>
        )
      })}
      {form.errors.fields && (
        <Text c="red" size="sm" role="alert">
          {form.errors.fields}
        </Text>
      )}
      {!readOnly && (
        <Button variant="light" onClick={() => form.insertListItem('fields', newFieldRow(fields.at(-1)))}>
          Add field
        </Button>
      )}
    </Stack>
  )
}

/** Labels per locale (`display`): of a field at `fields.N`, or of the credential at `config`. */
export function LabelRows({ form, at, readOnly }: { form: Form; at: string; readOnly: boolean }) {
  const path = `${at}.display`
  const rows = (form.getInputProps(path).value ?? []) as { locale: string; name: string }[]
  return (
    <Stack gap={4}>
      <Text size="sm" fw={500}>
        Labels per locale
      </Text>
      {rows.map((_, j) => (
        <Group key={j} gap="xs" align="flex-start" wrap="nowrap">
          <TextInput
            aria-label={`Locale of label ${j + 1}`}
            placeholder="Locale, e.g. en-US"
            w={140}
            readOnly={readOnly}
            {...form.getInputProps(`${path}.${j}.locale`)}
          />
          <TextInput
            aria-label={`Label ${j + 1}`}
            placeholder="Label"
            style={{ flex: 1 }}
            readOnly={readOnly}
            {...form.getInputProps(`${path}.${j}.name`)}
          />
          {!readOnly && (
            <ActionIcon
              variant="subtle"
              color="red"
              aria-label={`Remove label ${j + 1}`}
              onClick={() => form.removeListItem(path, j)}
              mt={6}
            >
              ×
            </ActionIcon>
          )}
        </Group>
      ))}
      {form.errors[path] && (
        <Text c="red" size="sm">
          {form.errors[path]}
        </Text>
      )}
      {!readOnly && (
        <Button
          variant="subtle"
          size="xs"
          w="fit-content"
          onClick={() => form.insertListItem(path, { locale: '', name: '', extra: {} })}
        >
          Add label
        </Button>
      )}
    </Stack>
  )
}
