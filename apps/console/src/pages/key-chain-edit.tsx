import {
  type KeyChainRotate,
  type KeyChainUpdate,
  zKeyChainRotate,
  zKeyChainUpdate,
} from '@credential-service/core-domain'
import type { KeyChain } from '@credential-service/sdk'
import { Button, Checkbox, Group, NumberInput, Stack, Text, Textarea } from '@mantine/core'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'
import { ExternalKeyIdInput, PemTextarea, pemsOf } from './key-chain-source-forms'

const EDIT_FIELDS = [
  'description',
  'rotationPolicy.enabled',
  'rotationPolicy.intervalDays',
  'rotationPolicy.gracePeriodDays',
  'certificateChain',
] as const

/**
 * `PATCH` of a key chain: its description, rotation policy, and optionally a new certificate
 * chain for the active key (a CA-issued one replacing a self-signed one, say).
 */
export function EditKeyChainForm({
  keyChain,
  update,
  onSaved,
}: {
  keyChain: KeyChain
  update: (body: KeyChainUpdate) => Promise<KeyChain>
  onSaved: (keyChain: KeyChain) => void
}) {
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      description: keyChain.description ?? '',
      rotationPolicy: {
        enabled: keyChain.rotationPolicy.enabled,
        intervalDays: keyChain.rotationPolicy.intervalDays as number | string,
        gracePeriodDays: keyChain.rotationPolicy.gracePeriodDays as number | string,
      },
      certificateChain: '',
    },
    fields: EDIT_FIELDS,
    schema: zKeyChainUpdate,
    toBody: (values): KeyChainUpdate => ({
      description: optional(values.description) ?? null,
      rotationPolicy: {
        enabled: values.rotationPolicy.enabled,
        intervalDays: Number(values.rotationPolicy.intervalDays),
        gracePeriodDays: Number(values.rotationPolicy.gracePeriodDays),
      },
      certificateChain: pemsOf(values.certificateChain),
    }),
    submit: update,
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <Textarea label="Description" autosize minRows={1} {...form.getInputProps('description')} />
        <Checkbox
          label="Rotate automatically"
          description={
            keyChain.kmsProvider === 'db'
              ? 'A new key every interval, made by the service.'
              : 'External keys are rotated by naming the new key in the provider ("Rotate now").'
          }
          {...form.getInputProps('rotationPolicy.enabled', { type: 'checkbox' })}
        />
        <Group grow align="flex-start">
          <NumberInput
            label="Interval (days)"
            min={1}
            max={3650}
            {...form.getInputProps('rotationPolicy.intervalDays')}
          />
          <NumberInput
            label="Grace period (days)"
            description="How long a rotated-out key stays published."
            min={0}
            max={365}
            {...form.getInputProps('rotationPolicy.gracePeriodDays')}
          />
        </Group>
        <PemTextarea
          label="New certificate chain"
          description="PEM certificates, leaf first, replacing the active key’s chain; the leaf must certify the active key. Empty: unchanged."
          {...form.getInputProps('certificateChain')}
        />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          Save key chain
        </Button>
      </Stack>
    </form>
  )
}

/**
 * Rotating an external key chain (Vault, AWS KMS): the new key is made in the provider first,
 * then named here; the current key stays published through the grace period. The dialog this
 * form sits in is the confirmation.
 */
export function RotateExternalForm({
  keyChain,
  rotate,
  onRotated,
  onCancel,
}: {
  keyChain: KeyChain
  rotate: (body: KeyChainRotate) => Promise<KeyChain>
  onRotated: (keyChain: KeyChain) => void
  onCancel: () => void
}) {
  const { form, onSubmit, pending } = useApiForm({
    initialValues: { externalKeyId: '' },
    fields: ['externalKeyId'],
    schema: zKeyChainRotate,
    toBody: (values): KeyChainRotate => ({ externalKeyId: values.externalKeyId.trim() }),
    submit: rotate,
    onDone: onRotated,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <Text>
          The key named here becomes the active key of {keyChain.id} at once; {keyChain.externalKeyId} stays
          published for verification through the grace period ({keyChain.rotationPolicy.gracePeriodDays}{' '}
          days).
        </Text>
        <ExternalKeyIdInput label="New external key id" {...form.getInputProps('externalKeyId')} />
        <FormAlert message={form.errors['']} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" color="red" loading={pending}>
            Rotate
          </Button>
        </Group>
      </Stack>
    </form>
  )
}
