import { FINAL_SESSION_STATUSES, type ManagementClient, type Session } from '@credential-service/sdk'
import { Badge, type MantineColor } from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'

/** How often an open session is read again while its event stream is not flowing. */
export const POLL_MS = 1000

export const isFinal = (status: Session['status']) => FINAL_SESSION_STATUSES.includes(status)

/**
 * A session of the active tenant, live until it ends (completed, verified, failed, expired): its
 * event stream (`GET …/sessions/{id}/events`) puts each change in the query cache as it happens;
 * while the stream does not flow (not opened yet, refused, broken) the session is read every
 * second instead.
 */
export function useLiveSession(api: ManagementClient, tenantId: string, sessionId: string | undefined) {
  const queryClient = useQueryClient()
  const [streaming, setStreaming] = useState(false)
  useEffect(() => {
    if (sessionId === undefined) return
    const controller = new AbortController()
    const key = ['sessions', tenantId, 'item', sessionId]
    void (async () => {
      try {
        const events = api.streamSessionEventsOfTenant(tenantId, sessionId, { signal: controller.signal })
        for await (const event of events) {
          if (event.event !== 'session') break
          queryClient.setQueryData(key, JSON.parse(event.data) as Session)
          setStreaming(true)
        }
      } catch {
        // Polling takes over.
      } finally {
        if (!controller.signal.aborted) setStreaming(false)
      }
    })()
    return () => controller.abort()
  }, [api, queryClient, tenantId, sessionId])
  return useQuery({
    queryKey: ['sessions', tenantId, 'item', sessionId ?? ''],
    queryFn: () => api.getSessionOfTenant(tenantId, sessionId as string) as Promise<Session>,
    enabled: sessionId !== undefined,
    refetchInterval: (query) =>
      streaming || (query.state.data && isFinal(query.state.data.status)) ? false : POLL_MS,
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
