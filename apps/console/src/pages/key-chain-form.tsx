import { type KeyChainCreate, zKeyChainCreate } from '@credential-service/core-domain'
import type { KeyChain } from '@credential-service/sdk'
import { Button, NumberInput, Select, Stack, TagsInput, Textarea, TextInput } from '@mantine/core'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'

const FIELDS = [
  'id',
  'description',
  'kmsProvider',
  'algorithm',
  'certificate.mode',
  'certificate.subject',
  'certificate.country',
  'certificate.validityDays',
  'certificate.dnsNames',
] as const

type Generate = Extract<KeyChainCreate, { source: 'generate' }>

/**
 * A new key chain (`source: generate`), its key made in the database or on the server's PKCS#11
 * token (not extractable; certified by the chain's own root), certified as chosen.
 */
export function GenerateKeyChainForm({
  create,
  onCreated,
}: {
  create: (body: KeyChainCreate) => Promise<KeyChain>
  onCreated: (keyChain: KeyChain) => void
}) {
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      id: '',
      description: '',
      kmsProvider: 'db',
      algorithm: 'ES256',
      certificate: {
        mode: 'internal-ca',
        subject: '',
        country: '',
        validityDays: 365 as number | string,
        dnsNames: [] as string[],
      },
    },
    fields: FIELDS,
    schema: zKeyChainCreate,
    toBody: (values): KeyChainCreate => ({
      source: 'generate',
      id: optional(values.id),
      description: optional(values.description),
      kmsProvider: values.kmsProvider as Generate['kmsProvider'],
      algorithm: values.algorithm as Generate['algorithm'],
      certificate: {
        mode: values.certificate.mode as 'internal-ca' | 'self-signed',
        subject: optional(values.certificate.subject),
        country: optional(values.certificate.country),
        validityDays: Number(values.certificate.validityDays),
        dnsNames: values.certificate.dnsNames.length ? values.certificate.dnsNames : undefined,
      },
    }),
    submit: create,
    onDone: onCreated,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <TextInput
          label="Id"
          description="Referenced as keyChainId by configurations; generated when empty."
          {...form.getInputProps('id')}
        />
        <Textarea label="Description" autosize minRows={1} {...form.getInputProps('description')} />
        <Select
          label="Where the key is made"
          description="A PKCS#11 token (HSM) needs PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN on the server; Azure Key Vault its AZURE_* variables; Cloud KMS GCP_KMS_CREDENTIALS and GCP_KMS_KEY_RING."
          data={[
            { value: 'db', label: 'In the database (encrypted)' },
            { value: 'pkcs11', label: 'On the PKCS#11 token (HSM), not extractable' },
            { value: 'azure-key-vault', label: 'In Azure Key Vault, not exportable' },
            { value: 'gcp-kms', label: 'In Google Cloud KMS (HSM), not exportable' },
          ]}
          allowDeselect={false}
          {...form.getInputProps('kmsProvider')}
        />
        <Select
          label="Algorithm"
          description="ES256 is what HAIP wallets require."
          data={['ES256', 'ES384', 'EdDSA']}
          allowDeselect={false}
          {...form.getInputProps('algorithm')}
        />
        <Select
          label="Certificate"
          data={[
            { value: 'internal-ca', label: 'Issued by a root of its own (HAIP: leaf not self-signed)' },
            { value: 'self-signed', label: 'Self-signed (development only)' },
          ]}
          allowDeselect={false}
          {...form.getInputProps('certificate.mode')}
        />
        <TextInput
          label="Subject"
          description="e.g. CN=ACME issuer,O=ACME; defaults to CN=<tenant> <key chain id>."
          {...form.getInputProps('certificate.subject')}
        />
        <TextInput
          label="Country"
          description="ISO 3166-1 alpha-2 in capitals, e.g. DE; mdoc configurations need one."
          maxLength={2}
          {...form.getInputProps('certificate.country')}
        />
        <NumberInput
          label="Validity (days)"
          min={1}
          max={3650}
          {...form.getInputProps('certificate.validityDays')}
        />
        <TagsInput
          label="DNS names"
          description="Subject alternative names; default: the host of PUBLIC_URL. Enter to add."
          {...form.getInputProps('certificate.dnsNames')}
        />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          Generate key chain
        </Button>
      </Stack>
    </form>
  )
}
