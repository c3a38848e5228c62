import { AppShell, Badge, Burger, Button, Group, NavLink, Select, Stack, Text, Title } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useQuery } from '@tanstack/react-query'
import { Outlet, NavLink as RouterLink, useLocation } from 'react-router'
import { canRead, isOperator, PAGE_KEYS, PAGES } from '../access'
import { useAuth, useSession } from '../auth/auth'

/** The signed-in frame: the pages the roles allow, the operator's tenant picker, sign-out. */
export function Shell() {
  const session = useSession()
  const { signOut } = useAuth()
  const [opened, { toggle }] = useDisclosure()
  const { pathname } = useLocation()
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 240, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Navigation" />
            <Text fw={700}>Credential service</Text>
          </Group>
          <Group wrap="nowrap">
            {isOperator(session) ? <TenantPicker /> : <TenantBadge tenantId={session.tenantId} />}
            <Text size="sm" visibleFrom="sm" data-testid="signed-in-as">
              {session.clientId}
            </Text>
            <Button variant="default" size="xs" onClick={() => signOut()}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      {/* Scrolls when its links are taller than the window (every page's link at 800 px). */}
      <AppShell.Navbar p="xs" component="nav" aria-label="Console pages" style={{ overflowY: 'auto' }}>
        <Stack gap={2}>
          {PAGE_KEYS.filter((page) => canRead(session, page)).map((page) => (
            <NavLink
              key={page}
              component={RouterLink}
              to={PAGES[page].path}
              label={PAGES[page].label}
              // Filled in shade 8: the light variant's blue on pale blue is under 4.5:1.
              variant="filled"
              active={pathname === PAGES[page].path || pathname.startsWith(`${PAGES[page].path}/`)}
              onClick={opened ? toggle : undefined}
            />
          ))}
        </Stack>
        <Text size="xs" c="dimmed" mt="auto" p="xs">
          Roles: {session.roles.join(', ') || 'none'}
        </Text>
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  )
}

function TenantBadge({ tenantId }: { tenantId: string | undefined }) {
  return tenantId ? <Badge variant="light">Tenant {tenantId}</Badge> : null
}

/** Operators (no tenant of their own) choose the tenant the pages act on. */
function TenantPicker() {
  const { api, activeTenant } = useSession()
  const { pickTenant } = useAuth()
  // The picker lists the first 100 tenants (the API's largest page); more need the Tenants page.
  const tenants = useQuery({
    queryKey: ['tenants', 'picker'],
    queryFn: () => api.listTenants({ limit: 100 }),
  })
  return (
    <Select
      aria-label="Tenant"
      placeholder="Pick a tenant"
      size="xs"
      searchable
      clearable
      value={activeTenant ?? null}
      onChange={(value) => pickTenant(value ?? undefined)}
      data={(tenants.data?.items ?? []).map((tenant) => ({
        value: tenant.id,
        label: `${tenant.name} (${tenant.id})`,
      }))}
      nothingFoundMessage="No tenant"
    />
  )
}

/** A page's heading, with its actions at the right. */
export function PageTitle({ title, children }: { title: string; children?: React.ReactNode }) {
  return (
    <Group justify="space-between" mb="md">
      <Title order={1} size="h2">
        {title}
      </Title>
      <Group>{children}</Group>
    </Group>
  )
}
