import { Badge, PasswordInput, Select } from '@mantine/core'
import type { GetInputPropsReturnType } from '@mantine/form'

/** What happens to a stored client secret on a save. */
export type SecretChange = 'keep' | 'set' | 'remove'

/** The body's `clientSecret`: left out keeps a stored one (replace) or sets none (create); null removes it. */
export const secretOfChange = (change: SecretChange, typed: string): string | null | undefined =>
  change === 'remove' ? null : change === 'set' && typed.trim() !== '' ? typed.trim() : undefined

/** The part of a form these fields read: `secretChange` and `clientSecret` values. */
export interface SecretForm {
  values: { secretChange: SecretChange }
  errors: Record<string, React.ReactNode>
  getInputProps(path: 'secretChange' | 'clientSecret'): GetInputPropsReturnType
}

/**
 * A write-only client secret (a login provider's, an introspecting server's): never shown; on an
 * edit kept, replaced or removed. `without` names the state with no secret ("a public client").
 */
export function ClientSecretFields({
  form,
  stored,
  without,
  description,
}: {
  form: SecretForm
  /** undefined when creating. */
  stored: { hasClientSecret: boolean } | undefined
  without: string
  description: string
}) {
  return (
    <>
      {stored && (
        <Select
          label="Client secret"
          allowDeselect={false}
          data={[
            { value: 'keep', label: stored.hasClientSecret ? 'Keep the stored secret' : `Keep: ${without}` },
            { value: 'set', label: 'Set a new secret' },
            { value: 'remove', label: `Remove it: ${without}` },
          ]}
          {...form.getInputProps('secretChange')}
          // The API names the secret when the kept one would go to another server.
          error={form.values.secretChange === 'set' ? undefined : form.errors.clientSecret}
        />
      )}
      {form.values.secretChange === 'set' && (
        <PasswordInput
          label={stored ? 'New client secret' : 'Client secret'}
          description={description}
          {...form.getInputProps('clientSecret')}
        />
      )}
    </>
  )
}

/** A list's column: whether a write-only secret is stored, or `without` one. */
export function StoredSecretBadge({ stored, without }: { stored: boolean; without: string }) {
  return (
    <Badge variant="light" color={stored ? 'teal.9' : 'gray.7'}>
      {stored ? 'stored' : without}
    </Badge>
  )
}
