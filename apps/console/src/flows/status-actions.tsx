import type { CredentialStatusChanged, CredentialStatusValue } from '@credential-service/sdk'
import { Alert, Group } from '@mantine/core'
import { useState } from 'react'
import { useSession } from '../auth/auth'
import { ConfirmButton } from '../components/confirm-button'

/** The credentials a status change is for: those of an issuance session, or of a status handle. */
export type StatusTarget = { sessionId: string } | { handle: string }

const ACTIONS: { status: CredentialStatusValue; label: string; color: string; message: string }[] = [
  {
    status: 'revoked',
    label: 'Revoke',
    color: 'red',
    message: 'Relying parties will refuse these credentials. Revocation is final: it cannot be undone.',
  },
  {
    status: 'suspended',
    label: 'Suspend',
    color: 'red',
    message: 'Relying parties will refuse these credentials until they are reinstated.',
  },
  {
    status: 'valid',
    label: 'Reinstate',
    color: 'blue',
    message: 'Suspended credentials become valid again (revoked ones stay revoked).',
  },
]

const describeTarget = (target: StatusTarget) =>
  'sessionId' in target
    ? `the credentials of session ${target.sessionId}`
    : `the credentials of handle ${target.handle}`

/**
 * Revoke, suspend, reinstate (draft-ietf-oauth-status-list): each asked for again, then what the
 * change covered. Published lists show it from their next fetch; caches within their `ttl`.
 */
export function StatusActions({ target, disabled }: { target: StatusTarget; disabled?: boolean }) {
  const { api, activeTenant } = useSession()
  const tenantId = activeTenant ?? ''
  const [result, setResult] = useState<CredentialStatusChanged>()
  const change = async (status: CredentialStatusValue) => {
    setResult(undefined)
    setResult(
      'sessionId' in target
        ? await api.changeSessionStatusOfTenant(tenantId, target.sessionId, { status })
        : await api.changeCredentialStatusOfTenant(tenantId, { handle: target.handle, status }),
    )
  }
  return (
    <>
      <Group gap="xs">
        {ACTIONS.map((action) => (
          <ConfirmButton
            key={action.status}
            label={action.label}
            color={action.color}
            disabled={disabled}
            title={`${action.label} ${describeTarget(target)}?`}
            message={action.message}
            onConfirm={() => change(action.status)}
          />
        ))}
      </Group>
      {result && (
        <Alert color="blue" title="Status changed" role="status" data-testid="status-result">
          {result.credentials} credential{result.credentials === 1 ? '' : 's'} with a status list entry,{' '}
          {result.changed} changed to {result.status}.
        </Alert>
      )}
    </>
  )
}
