import { Fieldset, Input, Select, SimpleGrid, Textarea, TextInput } from '@mantine/core'
import type { ClaimInput } from './claims-form'

const HINTS: Partial<Record<ClaimInput['type'], string>> = {
  number: 'A number',
  integer: 'A whole number',
  'date-time': 'e.g. 2026-01-31T12:00:00Z',
  array: 'A JSON array, e.g. ["DE"]',
  object: 'A JSON object',
}

/**
 * The claims form of one configuration, generated from its fields: an input per claim by type
 * (yes/no for booleans, a date picker for dates, JSON for arrays and objects), mandatory ones marked.
 */
export function ClaimsFieldset({
  legend,
  inputs,
  texts,
  errors,
  onChange,
}: {
  legend: string
  inputs: readonly ClaimInput[]
  texts: readonly string[]
  errors: Record<number, string> | undefined
  onChange: (index: number, text: string) => void
}) {
  return (
    <Fieldset legend={legend}>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        {inputs.map((input, index) => {
          const common = {
            label: input.label,
            required: input.mandatory,
            description: HINTS[input.type],
            error: errors?.[index],
          }
          const value = texts[index] ?? ''
          const key = input.path.join('\u0000')
          if (input.type === 'boolean')
            return (
              <Select
                key={key}
                {...common}
                data={[
                  { value: 'true', label: 'Yes (true)' },
                  { value: 'false', label: 'No (false)' },
                ]}
                clearable={!input.mandatory}
                placeholder={input.mandatory ? 'Pick one' : 'Not set'}
                value={value === '' ? null : value}
                onChange={(picked) => onChange(index, picked ?? '')}
              />
            )
          if (input.type === 'array' || input.type === 'object')
            return (
              <Textarea
                key={key}
                {...common}
                autosize
                minRows={1}
                value={value}
                onChange={(event) => onChange(index, event.currentTarget.value)}
              />
            )
          return (
            <TextInput
              key={key}
              {...common}
              type={input.type === 'date' ? 'date' : 'text'}
              inputMode={input.type === 'number' || input.type === 'integer' ? 'decimal' : undefined}
              value={value}
              onChange={(event) => onChange(index, event.currentTarget.value)}
            />
          )
        })}
      </SimpleGrid>
      {errors?.[-1] && (
        <Input.Error mt="xs" role="alert">
          {errors[-1]}
        </Input.Error>
      )}
    </Fieldset>
  )
}
