import {
  type AccessCertificateRequest,
  type RegistrationCertificateRequest,
  type RelyingPartyRegistration,
  zAccessCertificateRequest,
  zRegistrationCertificateRequest,
  zRelyingPartyRegistration,
} from '@credential-service/core-domain'
import type { AccessCertificate, RegistrarConfig, RegistrationCertificate } from '@credential-service/sdk'
import { Autocomplete, Button, Checkbox, Group, SimpleGrid, Stack, Text, TextInput } from '@mantine/core'
import { useState } from 'react'
import { canRead } from '../access'
import { useSession } from '../auth/auth'
import { downloadText } from '../components/download'
import { TokenBlock } from '../components/field-table'
import { FormAlert } from '../components/form-alert'
import { useReferenceIds } from '../components/reference-ids'
import { useApiForm } from '../forms/use-api-form'
import { downloadPem } from './key-chains-api'

const IDENTIFIERS = ['LEI', 'EUID', 'VAT', 'EORI', 'TAX', 'NTR'] as const

/** Registers the tenant at the registrar as relying party and/or issuer. */
export function RelyingPartyForm({ onSaved }: { onSaved: (config: RegistrarConfig) => void }) {
  const { api, activeTenant } = useSession()
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      name: '',
      roles: ['verifier'],
      identifiers: Object.fromEntries(IDENTIFIERS.map((id) => [id, ''])) as Record<string, string>,
    },
    fields: ['name', 'roles', 'identifiers', ...IDENTIFIERS.map((id) => `identifiers.${id}`)],
    schema: zRelyingPartyRegistration,
    toBody: (values): RelyingPartyRegistration => {
      const identifiers = Object.fromEntries(
        Object.entries(values.identifiers).flatMap(([id, value]) =>
          value.trim() ? [[id, value.trim()]] : [],
        ),
      )
      return {
        name: values.name.trim(),
        roles: values.roles as RelyingPartyRegistration['roles'],
        ...(Object.keys(identifiers).length > 0 ? { identifiers } : {}),
      }
    },
    submit: (body) => api.registerRelyingPartyOfTenant(activeTenant ?? '', body),
    onDone: onSaved,
  })
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Register at the registrar">
      <Stack gap="xs">
        <TextInput label="Legal name" required {...form.getInputProps('name')} />
        <Checkbox.Group label="Register as" {...form.getInputProps('roles')}>
          <Group mt={4}>
            <Checkbox value="verifier" label="Relying party (verifier)" />
            <Checkbox value="issuer" label="Attestation provider (issuer)" />
          </Group>
        </Checkbox.Group>
        <SimpleGrid cols={3}>
          {IDENTIFIERS.map((id) => (
            <TextInput key={id} label={id} {...form.getInputProps(`identifiers.${id}`)} />
          ))}
        </SimpleGrid>
        <FormAlert message={form.errors[''] ?? form.errors.identifiers} />
        <Button type="submit" loading={pending}>
          Register
        </Button>
      </Stack>
    </form>
  )
}

/** An access certificate for a key chain's active key, stored on the key chain. */
export function AccessCertificateForm() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const [issued, setIssued] = useState<AccessCertificate>()
  const keyChains = useReferenceIds(
    ['key-chains', tenantId],
    (query) => session.api.listKeyChainsOfTenant(tenantId, query),
    canRead(session, 'key-chains'),
  )
  const { form, onSubmit, pending } = useApiForm({
    initialValues: { keyChainId: '', dnsNames: '' },
    fields: ['keyChainId', 'dnsNames'],
    schema: zAccessCertificateRequest,
    toBody: (values): AccessCertificateRequest => {
      const dnsNames = values.dnsNames.split(/[\s,]+/).filter(Boolean)
      return { keyChainId: values.keyChainId.trim(), ...(dnsNames.length > 0 ? { dnsNames } : {}) }
    },
    submit: (body) => session.api.requestAccessCertificateOfTenant(tenantId, body),
    onDone: setIssued,
  })
  return (
    <Stack gap="xs">
      <form onSubmit={onSubmit} noValidate aria-label="Request an access certificate">
        <Stack gap="xs">
          <Autocomplete label="Key chain" required data={keyChains} {...form.getInputProps('keyChainId')} />
          <TextInput
            label="DNS names"
            description="Separated by spaces or commas; empty: the key chain's"
            {...form.getInputProps('dnsNames')}
          />
          <FormAlert message={form.errors['']} />
          <Button type="submit" loading={pending}>
            Request access certificate
          </Button>
        </Stack>
      </form>
      {issued && (
        <Stack gap={4} data-testid="access-certificate">
          <Text size="sm">
            Certificate {issued.registrarCertificateId} stored on key chain{' '}
            <strong>{issued.keyChainId}</strong> ({issued.certificateChain.length} certificates, leaf first).
          </Text>
          <Group>
            <Button
              variant="default"
              size="xs"
              onClick={() =>
                downloadPem(`${issued.keyChainId}-access-certificate.pem`, issued.certificateChain.join('\n'))
              }
            >
              Download certificate chain
            </Button>
          </Group>
        </Stack>
      )}
    </Stack>
  )
}

/** A registration certificate for a presentation configuration's DCQL query. */
export function RegistrationCertificateForm() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const [issued, setIssued] = useState<RegistrationCertificate>()
  const presentations = useReferenceIds(
    ['presentation-configs', tenantId],
    (query) => session.api.listPresentationConfigsOfTenant(tenantId, query),
    canRead(session, 'presentation-configs'),
  )
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      presentationConfigId: '',
      purpose: [{ lang: 'en', content: '' }],
      privacyPolicyUri: '',
      supportUri: '',
    },
    fields: (values) => [
      'presentationConfigId',
      'purpose',
      ...values.purpose.flatMap((_, index) => [`purpose.${index}.lang`, `purpose.${index}.content`]),
      'privacyPolicyUri',
      'supportUri',
    ],
    schema: zRegistrationCertificateRequest,
    toBody: (values): RegistrationCertificateRequest => ({
      presentationConfigId: values.presentationConfigId.trim(),
      purpose: values.purpose.map(({ lang, content }) => ({ lang: lang.trim(), content: content.trim() })),
      privacyPolicyUri: values.privacyPolicyUri.trim(),
      supportUri: values.supportUri.trim(),
    }),
    submit: (body) => session.api.requestRegistrationCertificateOfTenant(tenantId, body),
    onDone: setIssued,
  })
  return (
    <Stack gap="xs">
      <form onSubmit={onSubmit} noValidate aria-label="Request a registration certificate">
        <Stack gap="xs">
          <Autocomplete
            label="Presentation configuration"
            required
            data={presentations}
            {...form.getInputProps('presentationConfigId')}
          />
          {form.values.purpose.map((_, index) => (
            <Group key={index} grow align="flex-start">
              <TextInput
                label={`Language of purpose ${index + 1}`}
                maw={160}
                {...form.getInputProps(`purpose.${index}.lang`)}
              />
              <TextInput
                label={`Purpose ${index + 1}`}
                required
                {...form.getInputProps(`purpose.${index}.content`)}
              />
            </Group>
          ))}
          <Group>
            <Button
              variant="default"
              size="xs"
              onClick={() => form.insertListItem('purpose', { lang: '', content: '' })}
            >
              Add a language
            </Button>
            {form.values.purpose.length > 1 && (
              <Button
                variant="subtle"
                size="xs"
                color="red"
                onClick={() => form.removeListItem('purpose', form.values.purpose.length - 1)}
              >
                Remove the last language
              </Button>
            )}
          </Group>
          <TextInput label="Privacy policy URL" required {...form.getInputProps('privacyPolicyUri')} />
          <TextInput
            label="Support"
            required
            description="Email address, phone number or URL"
            {...form.getInputProps('supportUri')}
          />
          <FormAlert message={form.errors[''] ?? form.errors.purpose} />
          <Button type="submit" loading={pending}>
            Request registration certificate
          </Button>
        </Stack>
      </form>
      {issued && (
        <Stack gap={4} data-testid="registration-certificate">
          <Text size="sm">
            Registration certificate {issued.registrarCertificateId} for{' '}
            <strong>{issued.presentationConfigId}</strong>, expires{' '}
            {issued.expiresAt ? new Date(issued.expiresAt).toLocaleString() : 'never'}.
          </Text>
          <TokenBlock label="Registration certificate JWT" testId="registration-jwt" token={issued.jwt} />
          <Group>
            <Button
              variant="default"
              size="xs"
              onClick={() =>
                downloadText(`${issued.presentationConfigId}-registration.jwt`, issued.jwt, 'application/jwt')
              }
            >
              Download JWT
            </Button>
          </Group>
        </Stack>
      )}
    </Stack>
  )
}
