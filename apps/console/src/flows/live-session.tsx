import { FINAL_SESSION_STATUSES, type ManagementClient, type Session } from '@credential-service/sdk'
import { Badge, type MantineColor } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'

/** How often an open session is read again while a page follows it. */
export const POLL_MS = 1000

export const isFinal = (status: Session['status']) => FINAL_SESSION_STATUSES.includes(status)

/**
 * A session of the active tenant, read again every second until it ends (completed, verified,
 * failed, expired): the page follows a wallet's progress as it happens.
 */
export function useLiveSession(api: ManagementClient, tenantId: string, sessionId: string | undefined) {
  return useQuery({
    queryKey: ['sessions', tenantId, 'item', sessionId ?? ''],
    queryFn: () => api.getSessionOfTenant(tenantId, sessionId as string) as Promise<Session>,
    enabled: sessionId !== undefined,
    refetchInterval: (query) => (query.state.data && isFinal(query.state.data.status) ? false : POLL_MS),
  })
}

const COLORS: Record<Session['status'], MantineColor> = {
  offered: 'blue',
  pending: 'blue',
  token_issued: 'cyan',
  credential_issued: 'cyan',
  completed: 'green',
  verified: 'green',
  failed: 'red',
  expired: 'gray',
}

/**
 * A session's status as a badge: a coloured dot beside text in the text colour (coloured text on
 * a tint, or on a striped row, is under 4.5:1: axe color-contrast).
 */
export function StatusBadge({ status }: { status: Session['status'] }) {
  return (
    <Badge color={COLORS[status]} variant="dot" data-testid="session-status">
      {status}
    </Badge>
  )
}
