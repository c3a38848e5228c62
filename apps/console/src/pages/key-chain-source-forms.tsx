import { type KeyChainCreate, zKeyChainCreate } from '@credential-service/core-domain'
import type { KeyChain } from '@credential-service/sdk'
import { Button, Select, Stack, Textarea, TextInput } from '@mantine/core'
import type { GetInputPropsReturnType } from '@mantine/form'
import { FormAlert } from '../components/form-alert'
import { optional, useApiForm } from '../forms/use-api-form'

/** The PEM certificates pasted in one box, leaf first; undefined when the box is empty. */
export function pemsOf(text: string): string[] | undefined {
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []
  // Text that holds no certificate is sent as it is, so the API's schema names the field.
  if (pems.length === 0) return text.trim() ? [text.trim()] : undefined
  return pems.map((pem) => `${pem}\n`)
}

/** A private JWK (JSON) or a PEM, as the API takes either. */
function privateKeyOf(text: string): string | Record<string, unknown> {
  const trimmed = text.trim()
  if (!trimmed.startsWith('{')) return trimmed
  try {
    const jwk: unknown = JSON.parse(trimmed)
    return typeof jwk === 'object' && jwk !== null ? (jwk as Record<string, unknown>) : trimmed
  } catch {
    return trimmed
  }
}

const CHAIN_HINT =
  'PEM certificates, leaf first; the leaf must certify the key. Empty: the key chain has no certificate.'

interface SourceFormProps {
  create: (body: KeyChainCreate) => Promise<KeyChain>
  onCreated: (keyChain: KeyChain) => void
}

const IMPORT_FIELDS = ['id', 'description', 'kmsProvider', 'privateKey', 'certificateChain'] as const

/**
 * An existing private key brought into the database, Azure Key Vault or Cloud KMS (`source:
 * import`), with its certificate chain. The key is sent once, stored encrypted (or held by the
 * provider), and never shown again: the API returns only public material, and the form is emptied
 * once the key chain exists.
 */
export function ImportKeyChainForm({ create, onCreated }: SourceFormProps) {
  const { form, onSubmit, pending } = useApiForm({
    initialValues: { id: '', description: '', kmsProvider: 'db', privateKey: '', certificateChain: '' },
    fields: IMPORT_FIELDS,
    schema: zKeyChainCreate,
    toBody: (values): KeyChainCreate => ({
      source: 'import',
      id: optional(values.id),
      description: optional(values.description),
      kmsProvider: values.kmsProvider as 'db' | 'azure-key-vault' | 'gcp-kms',
      privateKey: privateKeyOf(values.privateKey),
      certificateChain: pemsOf(values.certificateChain),
    }),
    submit: create,
    onDone: onCreated,
  })
  return (
    <form onSubmit={onSubmit} noValidate autoComplete="off">
      <Stack>
        <IdAndDescription id={form.getInputProps('id')} description={form.getInputProps('description')} />
        <Select
          label="Key kept in"
          description="Azure Key Vault (Import Key) or Google Cloud KMS (an HSM key in GCP_KMS_KEY_RING, through an import job): the provider signs with it; P-256 or P-384 only."
          data={[
            { value: 'db', label: 'Database (encrypted)' },
            { value: 'azure-key-vault', label: 'Azure Key Vault' },
            { value: 'gcp-kms', label: 'Google Cloud KMS (HSM)' },
          ]}
          allowDeselect={false}
          {...form.getInputProps('kmsProvider')}
        />
        <PemTextarea
          label="Private key"
          description="A private JWK (JSON) or a PEM (PKCS#8 or SEC1): P-256, P-384 or Ed25519. Stored encrypted; never shown again."
          required
          {...form.getInputProps('privateKey')}
        />
        <ChainAndSubmit
          chain={form.getInputProps('certificateChain')}
          error={form.errors['']}
          pending={pending}
          label="Import key chain"
        />
      </Stack>
    </form>
  )
}

const EXTERNAL_FIELDS = ['id', 'description', 'kmsProvider', 'externalKeyId', 'certificateChain'] as const

/**
 * A key held by Vault transit, AWS KMS or a PKCS#11 token (`source: external`): the service signs
 * through the provider (VAULT_ADDR / AWS_REGION / PKCS11_MODULE on the server) and reads the
 * public key from it.
 */
export function ExternalKeyChainForm({ create, onCreated }: SourceFormProps) {
  const { form, onSubmit, pending } = useApiForm({
    initialValues: { id: '', description: '', kmsProvider: 'vault', externalKeyId: '', certificateChain: '' },
    fields: EXTERNAL_FIELDS,
    schema: zKeyChainCreate,
    toBody: (values): KeyChainCreate => ({
      source: 'external',
      id: optional(values.id),
      description: optional(values.description),
      kmsProvider: values.kmsProvider as 'vault' | 'aws-kms' | 'pkcs11' | 'azure-key-vault' | 'gcp-kms',
      externalKeyId: values.externalKeyId.trim(),
      certificateChain: pemsOf(values.certificateChain),
    }),
    submit: create,
    onDone: onCreated,
  })
  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <IdAndDescription id={form.getInputProps('id')} description={form.getInputProps('description')} />
        <Select
          label="Key provider"
          data={[
            { value: 'vault', label: 'HashiCorp Vault transit' },
            { value: 'aws-kms', label: 'AWS KMS' },
            { value: 'pkcs11', label: 'PKCS#11 token (HSM)' },
            { value: 'azure-key-vault', label: 'Azure Key Vault' },
            { value: 'gcp-kms', label: 'Google Cloud KMS' },
          ]}
          allowDeselect={false}
          {...form.getInputProps('kmsProvider')}
        />
        <ExternalKeyIdInput {...form.getInputProps('externalKeyId')} />
        <ChainAndSubmit
          chain={form.getInputProps('certificateChain')}
          error={form.errors['']}
          pending={pending}
          label="Register key chain"
        />
      </Stack>
    </form>
  )
}

/** The key's name in the provider: a Vault transit key name, an AWS KMS key id, ARN or alias, or a token key's label. */
export function ExternalKeyIdInput(props: React.ComponentProps<typeof TextInput>) {
  return (
    <TextInput
      label="External key id"
      description="Vault transit key name, AWS KMS key id, ARN or alias, the PKCS#11 key's label (CKA_LABEL; id:<hex> for its CKA_ID), the Azure Key Vault key's name (or name/version), or the Cloud KMS key version (projects/.../cryptoKeyVersions/N)."
      required
      {...props}
    />
  )
}

/** A box for PEM or JSON key material: monospace, growing, no spelling marks. */
export function PemTextarea(props: React.ComponentProps<typeof Textarea>) {
  return (
    <Textarea
      autosize
      minRows={4}
      maxRows={10}
      spellCheck={false}
      styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
      {...props}
    />
  )
}

type InputProps = GetInputPropsReturnType

/** The id (generated when empty) and description every source's form starts with. */
function IdAndDescription({ id, description }: { id: InputProps; description: InputProps }) {
  return (
    <>
      <TextInput label="Id" description="Generated when empty." {...id} />
      <Textarea label="Description" autosize minRows={1} {...description} />
    </>
  )
}

/** The certificate chain, the problem that names no field, and the submit button they end with. */
function ChainAndSubmit(props: {
  chain: InputProps
  error: React.ReactNode
  pending: boolean
  label: string
}) {
  return (
    <>
      <PemTextarea label="Certificate chain" description={CHAIN_HINT} {...props.chain} />
      <FormAlert message={props.error} />
      <Button type="submit" loading={props.pending}>
        {props.label}
      </Button>
    </>
  )
}
