import {
  type FederationAnchor,
  type FederationMembershipInput,
  zFederationMembershipInput,
} from '@credential-service/core-domain'
import { type FederationMembership, ManagementApiError } from '@credential-service/sdk'
import {
  ActionIcon,
  Alert,
  Anchor,
  Autocomplete,
  Button,
  Fieldset,
  Group,
  NumberInput,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { canRead } from '../access'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { ConfirmButton } from '../components/confirm-button'
import { FieldTable } from '../components/field-table'
import { FormAlert } from '../components/form-alert'
import { useReferenceIds } from '../components/reference-ids'
import { SectionCard } from '../components/section-card'
import { PageTitle } from '../components/shell'
import { describeError } from '../forms/problems'
import { optional, useApiForm } from '../forms/use-api-form'

const WELL_KNOWN = '/.well-known/openid-federation'

/**
 * The tenant's OpenID Federation membership (docs/federation.md): its issuer and verifier as
 * federation entities, their superiors, anchors, trust marks and statements; leaving the federation.
 */
export default function FederationPage() {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const queryClient = useQueryClient()
  const key = ['federation', tenantId]
  const membership = useQuery({
    queryKey: key,
    // Not a member yet is a 404: shown as such, not as a failure.
    queryFn: async () => {
      try {
        return await api.getFederationMembershipOfTenant(tenantId)
      } catch (error) {
        if (error instanceof ManagementApiError && error.status === 404) return null
        throw error
      }
    },
  })
  const saved = (value: FederationMembership | null) => queryClient.setQueryData(key, value)
  const current = membership.data
  return (
    <Stack>
      <PageTitle title={`Federation of ${tenantId}`} />
      {membership.isPending && <Busy label="Loading the federation membership" />}
      {membership.isError && (
        <Alert color="red" title="Could not load the federation membership" role="alert">
          {describeError(membership.error)}
        </Alert>
      )}
      {current !== undefined && (
        <SimpleGrid cols={{ base: 1, lg: 2 }}>
          <SectionCard title="Entities">
            {current ? (
              <EntitiesTable membership={current} />
            ) : (
              <Text data-testid="federation-status">
                Not a federation member: the issuer and verifier serve no entity configuration.
              </Text>
            )}
            {current && (
              <ConfirmButton
                label="Leave federation"
                title="Leave the federation?"
                message="The entity configurations are no longer served; wallets that resolve a trust chain to the tenant stop trusting it. Key chains stay."
                onConfirm={() => api.deleteFederationMembershipOfTenant(tenantId)}
                onDone={() => saved(null)}
              />
            )}
          </SectionCard>
          <SectionCard title="Membership">
            <MembershipForm key={current?.updatedAt ?? 'new'} stored={current} onSaved={saved} />
          </SectionCard>
        </SimpleGrid>
      )}
    </Stack>
  )
}

function EntitiesTable({ membership }: { membership: FederationMembership }) {
  const link = (entityId: string) => (
    <Anchor href={`${entityId}${WELL_KNOWN}`} target="_blank" rel="noreferrer">
      {entityId}
    </Anchor>
  )
  const rows: [string, React.ReactNode][] = [
    ['Issuer entity', link(membership.entityIds.issuer)],
    ['Verifier entity', link(membership.entityIds.verifier)],
    ['Key chain', membership.keyChainId],
    ['Authority hints', membership.authorityHints.join(', ')],
    ['Trust anchors', membership.trustAnchors.map((anchor) => anchor.entityId).join(', ') || 'none'],
    ['Trust marks', membership.trustMarks.map((mark) => mark.trustMarkType).join(', ') || 'none'],
    ['Subordinate statements', String(membership.subordinateStatements.length)],
    ['Lifetime', `${membership.lifetimeSeconds} s`],
    ['Updated', new Date(membership.updatedAt).toLocaleString()],
  ]
  return <FieldTable label="Federation entities" testId="federation-status" rows={rows} />
}

/**
 * Key chains that may sign entity statements: the tenant's, minus those of its credential and
 * presentation configurations (the API refuses them too, naming keyChainId).
 */
function useFederationKeyChains(tenantId: string): string[] {
  const session = useSession()
  const { api } = session
  const chains = useReferenceIds(
    ['key-chains', tenantId],
    (query) => api.listKeyChainsOfTenant(tenantId, query),
    canRead(session, 'key-chains'),
  )
  const signing = useQuery({
    queryKey: ['federation', tenantId, 'signing-key-chains'],
    queryFn: async () => {
      const [credentials, presentations] = await Promise.all([
        canRead(session, 'credential-configs')
          ? api.listCredentialConfigsOfTenant(tenantId, { limit: 100 })
          : { items: [] },
        canRead(session, 'presentation-configs')
          ? api.listPresentationConfigsOfTenant(tenantId, { limit: 100 })
          : { items: [] },
      ])
      return new Set([...credentials.items, ...presentations.items].map((item) => item.keyChainId))
    },
  })
  return chains.filter((id) => !signing.data?.has(id))
}

// One entry per line; URLs and JWTs hold no whitespace, so any whitespace separates them.
const entries = (text: string) => text.split(/\s+/).filter(Boolean)

/** The anchor's JWKS as typed: parsed when it is JSON, else left for the schema to name. */
const jwksOf = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function MembershipForm({
  stored,
  onSaved,
}: {
  stored: FederationMembership | null
  onSaved: (value: FederationMembership) => void
}) {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const keyChains = useFederationKeyChains(tenantId)
  const { form, onSubmit, pending } = useApiForm({
    initialValues: {
      keyChainId: stored?.keyChainId ?? '',
      authorityHints: stored?.authorityHints.join('\n') ?? '',
      trustAnchors: (stored?.trustAnchors ?? []).map((anchor) => ({
        entityId: anchor.entityId,
        jwks: JSON.stringify(anchor.jwks, null, 2),
      })),
      trustMarks: stored?.trustMarks ?? [],
      subordinateStatements: stored?.subordinateStatements.join('\n') ?? '',
      lifetimeSeconds: stored?.lifetimeSeconds ?? 86_400,
      organizationName: stored?.organizationName ?? '',
    },
    fields: (values) => [
      'keyChainId',
      'authorityHints',
      'trustAnchors',
      ...values.trustAnchors.flatMap((_, index) => [
        `trustAnchors.${index}.entityId`,
        `trustAnchors.${index}.jwks`,
      ]),
      'trustMarks',
      ...values.trustMarks.flatMap((_, index) => [
        `trustMarks.${index}.trustMarkType`,
        `trustMarks.${index}.trustMark`,
      ]),
      'subordinateStatements',
      'lifetimeSeconds',
      'organizationName',
    ],
    schema: zFederationMembershipInput,
    toBody: (values): FederationMembershipInput => ({
      keyChainId: values.keyChainId.trim(),
      authorityHints: entries(values.authorityHints),
      trustAnchors: values.trustAnchors.map((anchor) => ({
        entityId: anchor.entityId.trim(),
        jwks: jwksOf(anchor.jwks) as FederationAnchor['jwks'],
      })),
      trustMarks: values.trustMarks.map((mark) => ({
        trustMarkType: mark.trustMarkType.trim(),
        trustMark: mark.trustMark.trim(),
      })),
      subordinateStatements: entries(values.subordinateStatements),
      lifetimeSeconds: Number(values.lifetimeSeconds),
      organizationName: optional(values.organizationName),
    }),
    submit: (body) => api.putFederationMembershipOfTenant(tenantId, body),
    onDone: onSaved,
  })
  const { trustAnchors, trustMarks } = form.getValues()
  return (
    <form onSubmit={onSubmit} noValidate aria-label="Federation membership">
      <Stack gap="xs">
        <Autocomplete
          label="Federation key chain"
          required
          description="Signs the entity configurations only; key chains of credential or presentation configurations are not offered"
          data={keyChains}
          {...form.getInputProps('keyChainId')}
        />
        <Textarea
          label="Authority hints"
          required
          autosize
          minRows={2}
          description="Entity identifiers of the immediate superiors, one per line"
          {...form.getInputProps('authorityHints')}
        />
        <Fieldset legend="Trust anchors">
          <Stack gap="xs">
            {trustAnchors.map((_, index) => (
              <Stack key={form.key(`trustAnchors.${index}`)} gap={4}>
                <Group align="flex-end" wrap="nowrap">
                  <TextInput
                    style={{ flex: 1 }}
                    label={`Anchor ${index + 1} entity identifier`}
                    required
                    {...form.getInputProps(`trustAnchors.${index}.entityId`)}
                  />
                  <ActionIcon
                    variant="subtle"
                    color="red"
                    aria-label={`Remove anchor ${index + 1}`}
                    onClick={() => form.removeListItem('trustAnchors', index)}
                  >
                    x
                  </ActionIcon>
                </Group>
                <Textarea
                  label={`Anchor ${index + 1} JWKS`}
                  required
                  autosize
                  minRows={3}
                  description="Its federation keys as a JSON JWK Set, obtained out of band"
                  styles={{ input: { fontFamily: 'monospace' } }}
                  {...form.getInputProps(`trustAnchors.${index}.jwks`)}
                />
              </Stack>
            ))}
            <Button
              variant="default"
              size="xs"
              onClick={() => form.insertListItem('trustAnchors', { entityId: '', jwks: '' })}
            >
              Add trust anchor
            </Button>
          </Stack>
        </Fieldset>
        <Fieldset legend="Trust marks">
          <Stack gap="xs">
            {trustMarks.map((_, index) => (
              <Stack key={form.key(`trustMarks.${index}`)} gap={4}>
                <Group align="flex-end" wrap="nowrap">
                  <TextInput
                    style={{ flex: 1 }}
                    label={`Trust mark ${index + 1} type`}
                    required
                    {...form.getInputProps(`trustMarks.${index}.trustMarkType`)}
                  />
                  <ActionIcon
                    variant="subtle"
                    color="red"
                    aria-label={`Remove trust mark ${index + 1}`}
                    onClick={() => form.removeListItem('trustMarks', index)}
                  >
                    x
                  </ActionIcon>
                </Group>
                <Textarea
                  label={`Trust mark ${index + 1} JWT`}
                  required
                  autosize
                  minRows={2}
                  description="About the tenant's issuer or verifier entity"
                  {...form.getInputProps(`trustMarks.${index}.trustMark`)}
                />
              </Stack>
            ))}
            <Button
              variant="default"
              size="xs"
              onClick={() => form.insertListItem('trustMarks', { trustMarkType: '', trustMark: '' })}
            >
              Add trust mark
            </Button>
          </Stack>
        </Fieldset>
        <Textarea
          label="Subordinate statements"
          autosize
          minRows={2}
          description="JWTs superiors issued about the tenant's entities, one per line; used instead of fetching them while valid"
          {...form.getInputProps('subordinateStatements')}
        />
        <NumberInput
          label="Lifetime (seconds)"
          description="exp - iat of the entity configurations, 300 s to 30 days"
          min={300}
          max={30 * 86_400}
          {...form.getInputProps('lifetimeSeconds')}
        />
        <TextInput label="Organization name" {...form.getInputProps('organizationName')} />
        <FormAlert message={form.errors['']} />
        <Button type="submit" loading={pending}>
          {stored ? 'Save membership' : 'Join federation'}
        </Button>
      </Stack>
    </form>
  )
}
