import { allFormatSpecs, formatSpec } from '@credential-service/core-domain'
import {
  Autocomplete,
  Button,
  Checkbox,
  Fieldset,
  Group,
  NumberInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core'
import type { UseFormReturnType } from '@mantine/form'
import type { CredentialConfigValues } from './config-values'
import { LabelRows } from './field-editor'

type Form = UseFormReturnType<CredentialConfigValues>

/** Ids to pick from for a reference (key chain, attribute provider…); empty when the roles cannot list them. */
export interface ReferenceOptions {
  keyChains: string[]
  attributeProviders: string[]
  webhookEndpoints: string[]
  loginProviders: string[]
}

/** The configuration's identity, format and type, and its credential labels. */
export function ConfigIdentity({
  form,
  editing,
  readOnly,
}: {
  form: Form
  editing: boolean
  readOnly: boolean
}) {
  const { format } = form.values.config
  return (
    <Stack gap="sm">
      <TextInput
        label="Id"
        description="The credential_configuration_id wallets ask for"
        required
        readOnly={editing || readOnly}
        {...form.getInputProps('id')}
      />
      <Textarea
        label="Description"
        autosize
        minRows={1}
        readOnly={readOnly}
        {...form.getInputProps('description')}
      />
      <Stack gap={4}>
        <Text size="sm" fw={500} id="format-label">
          Format
        </Text>
        <SegmentedControl
          aria-labelledby="format-label"
          readOnly={readOnly}
          data={allFormatSpecs().map((spec) => ({
            value: spec.format,
            label: `${spec.title} (${spec.format})`,
          }))}
          {...form.getInputProps('config.format')}
        />
      </Stack>
      {formatSpec(format).configInputs.map((input) => {
        // The format's own members (FormatSpec `configInputs`): a set of values gets a tag input.
        const Input = input.list ? TagsInput : TextInput
        return (
          <Input
            key={`${format} ${input.member}`}
            label={input.label}
            description={input.description}
            required={input.required}
            readOnly={readOnly}
            {...form.getInputProps(`config.members.${input.member}`)}
            // API problems name the member as the body has it (`config.vct`).
            error={form.errors[`config.${input.member}`]}
          />
        )
      })}
      <TextInput
        label="Scope"
        description="OAuth scope of this credential (HAIP 4.3); default: the id"
        readOnly={readOnly}
        {...form.getInputProps('config.scope')}
      />
      <Fieldset legend="Credential display" p="sm">
        <LabelRows form={form} at="config" readOnly={readOnly} />
      </Fieldset>
    </Stack>
  )
}

/** Signing, claim sources, lifetime and the wallet security the configuration asks for. */
export function ConfigSettings({
  form,
  references,
  readOnly,
}: {
  form: Form
  references: ReferenceOptions
  readOnly: boolean
}) {
  const { userAuthentication, keyAttestation } = form.values
  return (
    <Stack gap="sm">
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Autocomplete
          label="Key chain"
          description="Signs the credentials"
          required
          data={references.keyChains}
          readOnly={readOnly}
          {...form.getInputProps('keyChainId')}
        />
        <Autocomplete
          label="Attribute provider"
          description="Where claims come from"
          data={references.attributeProviders}
          readOnly={readOnly}
          {...form.getInputProps('attributeProviderId')}
        />
        <Autocomplete
          label="Webhook endpoint"
          description="Issuance notifications"
          data={references.webhookEndpoints}
          readOnly={readOnly}
          {...form.getInputProps('webhookEndpointId')}
        />
        <NumberInput
          label="Lifetime (seconds)"
          min={60}
          readOnly={readOnly}
          {...form.getInputProps('lifetimeSeconds')}
        />
        <NumberInput
          label="Batch size"
          min={1}
          max={100}
          readOnly={readOnly}
          {...form.getInputProps('batchSize')}
        />
        <Select
          label="DPoP"
          data={['optional', 'required']}
          allowDeselect={false}
          readOnly={readOnly}
          {...form.getInputProps('dpop')}
        />
        <Select
          label="Wallet attestation"
          data={['optional', 'required']}
          allowDeselect={false}
          readOnly={readOnly}
          {...form.getInputProps('walletAttestation')}
        />
      </SimpleGrid>
      <Group>
        <Checkbox
          label="Key binding"
          disabled={readOnly}
          {...form.getInputProps('keyBinding', { type: 'checkbox' })}
        />
        <Checkbox
          label="Status list entry (revocation)"
          disabled={readOnly}
          {...form.getInputProps('statusManagement', { type: 'checkbox' })}
        />
        <Checkbox
          label="Refresh tokens"
          disabled={readOnly}
          {...form.getInputProps('refreshTokens', { type: 'checkbox' })}
        />
      </Group>
      <Fieldset legend="Holder login (authorization code flow)" p="sm">
        <Stack gap="xs">
          <Checkbox
            label="The holder logs in at a login provider"
            disabled={readOnly}
            {...form.getInputProps('userAuthentication.enabled', { type: 'checkbox' })}
          />
          {userAuthentication.enabled && (
            <>
              <Autocomplete
                label="Login provider"
                required
                data={references.loginProviders}
                readOnly={readOnly}
                {...form.getInputProps('userAuthentication.loginProviderId')}
              />
              <Text size="sm" fw={500}>
                Claims of the login that fill fields
              </Text>
              {userAuthentication.claims.map((_, i) => (
                <Group key={i} gap="xs" wrap="nowrap">
                  <TextInput
                    aria-label={`Field path of mapping ${i + 1}`}
                    placeholder="Field path, e.g. address.locality"
                    style={{ flex: 1 }}
                    readOnly={readOnly}
                    {...form.getInputProps(`userAuthentication.claims.${i}.field`)}
                  />
                  <TextInput
                    aria-label={`Login claim of mapping ${i + 1}`}
                    placeholder="ID token or userinfo claim"
                    style={{ flex: 1 }}
                    readOnly={readOnly}
                    {...form.getInputProps(`userAuthentication.claims.${i}.claim`)}
                  />
                </Group>
              ))}
              {form.errors['userAuthentication.claims'] && (
                <Text c="red" size="sm">
                  {form.errors['userAuthentication.claims']}
                </Text>
              )}
              {!readOnly && (
                <Button
                  variant="subtle"
                  size="xs"
                  w="fit-content"
                  onClick={() => form.insertListItem('userAuthentication.claims', { field: '', claim: '' })}
                >
                  Add claim mapping
                </Button>
              )}
            </>
          )}
        </Stack>
      </Fieldset>
      <Fieldset legend="Key attestation (OpenID4VCI Appendix D)" p="sm">
        <Stack gap="xs">
          <Checkbox
            label="Set a key attestation policy"
            disabled={readOnly}
            {...form.getInputProps('keyAttestation.enabled', { type: 'checkbox' })}
          />
          {keyAttestation.enabled && (
            <>
              <Checkbox
                label="Proofs must carry a key attestation"
                disabled={readOnly}
                {...form.getInputProps('keyAttestation.required', { type: 'checkbox' })}
              />
              <TagsInput
                label="Accepted key storage"
                description="e.g. iso_18045_high; Enter to add"
                readOnly={readOnly}
                {...form.getInputProps('keyAttestation.keyStorage')}
              />
              <TagsInput
                label="Accepted user authentication"
                readOnly={readOnly}
                {...form.getInputProps('keyAttestation.userAuthentication')}
              />
            </>
          )}
          {form.errors.keyAttestation && (
            <Text c="red" size="sm">
              {form.errors.keyAttestation}
            </Text>
          )}
        </Stack>
      </Fieldset>
    </Stack>
  )
}
