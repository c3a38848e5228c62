import type { Session } from '@credential-service/sdk'
import { Alert, Anchor, Button, Card, Code, CopyButton, Group, Stack, Text, Title } from '@mantine/core'
import { lazy, Suspense } from 'react'
import { Link } from 'react-router'
import { useSession } from '../auth/auth'
import { describeError } from '../forms/problems'
import { isFinal, StatusBadge, useLiveSession } from './live-session'

const QrCode = lazy(() => import('./qr-code').then((module) => ({ default: module.QrCode })))

export interface FlowResultProps {
  /** What the wallet is asked for: "offer", "presentation request". */
  what: string
  sessionId: string
  /** The `openid-credential-offer://` or `openid4vp://` URI. */
  uri: string
  expiresAt: string
  /** Shown under the status: the tx_code, the disclosed claims. */
  children?: (session: Session | undefined) => React.ReactNode
}

/**
 * What a wallet needs to take part (the QR code for another device, the link for this one) and
 * the session's status as it changes, until it ends.
 */
export function FlowResult({ what, sessionId, uri, expiresAt, children }: FlowResultProps) {
  const { api, activeTenant } = useSession()
  const live = useLiveSession(api, activeTenant ?? '', sessionId)
  const session = live.data
  return (
    <Card withBorder component="section" aria-labelledby="flow-result-title">
      <Stack>
        <Title order={2} size="h3" id="flow-result-title">
          {what[0]?.toUpperCase()}
          {what.slice(1)} {sessionId}
        </Title>
        <Group align="flex-start" wrap="wrap" gap="xl">
          <Suspense fallback={null}>
            <QrCode value={uri} label={`QR code of the ${what} for a wallet on another device`} />
          </Suspense>
          <Stack gap="xs" maw={520}>
            <Text size="sm">
              Scan the QR code with a wallet on another device, or open the link with a wallet on this device.
              It works until {new Date(expiresAt).toLocaleString()}.
            </Text>
            <Group gap="xs">
              <Anchor href={uri} data-testid="same-device-link">
                Open in a wallet on this device
              </Anchor>
              <CopyButton value={uri}>
                {({ copied, copy }) => (
                  <Button size="xs" variant="light" onClick={copy}>
                    {copied ? 'Copied' : 'Copy link'}
                  </Button>
                )}
              </CopyButton>
            </Group>
            <Code block data-testid="flow-uri" style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
              {uri}
            </Code>
          </Stack>
        </Group>
        <Group gap="xs" role="status" aria-live="polite">
          <Text size="sm" fw={500}>
            Session status:
          </Text>
          {session ? <StatusBadge status={session.status} /> : <Text size="sm">reading…</Text>}
          {session && !isFinal(session.status) && (
            <Text size="xs" c="dimmed">
              following the wallet…
            </Text>
          )}
          <Anchor component={Link} to={`/sessions/${encodeURIComponent(sessionId)}`} size="sm">
            Session details
          </Anchor>
        </Group>
        {session?.failureReason && (
          <Alert color="red" title="The session failed">
            {session.failureReason}
          </Alert>
        )}
        {live.isError && (
          <Alert color="red" title="Could not read the session" role="alert">
            {describeError(live.error)}
          </Alert>
        )}
        {children?.(session)}
      </Stack>
    </Card>
  )
}
