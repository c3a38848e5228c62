import { Alert, Stack, Text } from '@mantine/core'
import { Link } from 'react-router'
import { canRead, PAGES, type PageKey } from '../access'
import { useSession } from '../auth/auth'
import { PageTitle } from './shell'

/**
 * Renders a page only when the roles allow it (its API would answer 403 otherwise). A page
 * reached by its URL without the roles says so, and which roles it needs, instead of rendering
 * nothing; a tenant page asks an operator to pick a tenant first.
 */
export function RequirePage({ page, children }: { page: PageKey; children: React.ReactNode }) {
  const session = useSession()
  const { label, read, tenantScoped } = PAGES[page]
  if (!canRead(session, page)) {
    return (
      <Stack>
        <PageTitle title={label} />
        <Alert color="red" title="Not allowed" role="alert" data-testid="forbidden">
          <Text>
            The client <strong>{session.clientId}</strong> may not see {label.toLowerCase()}: this page needs
            one of the roles {read.join(', ')}, and the client has {session.roles.join(', ') || 'none'}.
          </Text>
          <Text mt="xs">
            Ask an administrator for the role, or go to <Link to="/">the pages you may use</Link>.
          </Text>
        </Alert>
      </Stack>
    )
  }
  if (tenantScoped && !session.activeTenant) {
    return (
      <Stack>
        <PageTitle title={label} />
        <Alert color="blue" title="Pick a tenant" role="status">
          {label} belong to a tenant: pick one in the tenant list at the top.
        </Alert>
      </Stack>
    )
  }
  return <>{children}</>
}
