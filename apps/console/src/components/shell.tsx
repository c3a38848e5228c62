import { AppShell, Badge, Burger, Button, Group, NavLink, Select, Stack, Text, Title } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useQuery } from '@tanstack/react-query'
import { Outlet, NavLink as RouterLink, useLocation } from 'react-router'
import { canRead, GROUP_KEYS, GROUPS, isOperator, PAGE_KEYS, PAGES } from '../access'
import { useAuth, useSession } from '../auth/auth'
import { Crumbs, pageAt } from './crumbs'

/** The signed-in frame: the pages the roles allow, the operator's tenant picker, sign-out. */
export function Shell() {
  const session = useSession()
  const { signOut } = useAuth()
  const [opened, { toggle }] = useDisclosure()
  const { pathname } = useLocation()
  const current = pageAt(pathname)?.page
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 240, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <a className="skip-link" href="#main">
          Skip to main content
        </a>
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
        <Stack gap="xs">
          {GROUP_KEYS.map((group) => {
            const pages = PAGE_KEYS.filter((page) => PAGES[page].group === group && canRead(session, page))
            if (pages.length === 0) return null
            return (
              // biome-ignore lint/a11y/useSemanticElements: links, not form controls (a fieldset's job)
              <div key={group} role="group" aria-labelledby={`nav-group-${group}`}>
                <Text id={`nav-group-${group}`} size="xs" fw={700} tt="uppercase" c="dimmed" px="xs" pb={2}>
                  {GROUPS[group]}
                </Text>
                {pages.map((page) => (
                  <NavLink
                    key={page}
                    component={RouterLink}
                    to={PAGES[page].path}
                    label={PAGES[page].label}
                    // Filled in shade 8: the light variant's blue on pale blue is under 4.5:1.
                    variant="filled"
                    active={current === page}
                    onClick={opened ? toggle : undefined}
                  />
                ))}
              </div>
            )
          })}
        </Stack>
        <Text size="xs" c="dimmed" mt="auto" p="xs">
          Roles: {session.roles.join(', ') || 'none'}
        </Text>
      </AppShell.Navbar>
      {/* The skip link's target: focusable by script only, so it takes no tab stop. */}
      <AppShell.Main id="main" tabIndex={-1}>
        <Crumbs />
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
