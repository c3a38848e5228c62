import { ManagementApiError } from '@credential-service/sdk'
import { Alert, type CSSVariablesResolver, createTheme, MantineProvider, Modal, Stack } from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import { QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { createBrowserRouter, Navigate, RouterProvider } from 'react-router'
import { canRead, PAGE_KEYS, PAGES, type PageKey } from './access'
import { AuthProvider, useAuth, useSession } from './auth/auth'
import { useDialogFirstField } from './components/dialog-focus'
import { RequirePage } from './components/require-page'
import { PageTitle, Shell } from './components/shell'
import { SignInPage } from './pages/sign-in'

/**
 * A page loaded when first opened: the initial JavaScript holds the frame and the sign-in page,
 * and the pages' forms bring the zod schemas with them (the 250 KB gzip budget, issue 22).
 */
const lazyPage = (page: PageKey, load: () => Promise<{ default: React.ComponentType }>) => ({
  lazy: async () => {
    const { default: Page } = await load()
    return { element: page === 'health' ? <Page /> : <RequirePage page={page} children={<Page />} /> }
  },
})

/** Providers, authorization servers, webhooks, registrar, schema metadata, audit events and metrics (issue 22). */
const OPERATIONS_ROUTES = [
  {
    path: 'attribute-providers',
    ...lazyPage('attribute-providers', () => import('./pages/attribute-providers')),
  },
  { path: 'login-providers', ...lazyPage('login-providers', () => import('./pages/login-providers')) },
  { path: 'auth-servers', ...lazyPage('auth-servers', () => import('./pages/auth-servers')) },
  { path: 'wallet-providers', ...lazyPage('wallet-providers', () => import('./pages/wallet-providers')) },
  { path: 'trust-lists', ...lazyPage('trust-lists', () => import('./pages/trust-lists')) },
  { path: 'federation', ...lazyPage('federation', () => import('./pages/federation')) },
  {
    path: 'webhook-endpoints',
    ...lazyPage('webhook-endpoints', () => import('./pages/webhook-endpoints')),
  },
  {
    path: 'webhook-endpoints/:webhookEndpointId/deliveries',
    ...lazyPage('webhook-endpoints', () => import('./pages/webhook-deliveries')),
  },
  { path: 'registrar', ...lazyPage('registrar', () => import('./pages/registrar')) },
  { path: 'schema-metadata', ...lazyPage('schema-metadata', () => import('./pages/schema-metadata')) },
  { path: 'audit-events', ...lazyPage('audit-events', () => import('./pages/audit-events')) },
  { path: 'metrics', ...lazyPage('metrics', () => import('./pages/metrics')) },
]

/** Served under /console/ (apps/management/src/routes/console.ts answers index.html for every route). */
const router = createBrowserRouter(
  [
    {
      element: <Shell />,
      children: [
        { index: true, element: <FirstPage /> },
        { path: 'dashboard', ...lazyPage('dashboard', () => import('./pages/dashboard')) },
        { path: 'tenants', ...lazyPage('tenants', () => import('./pages/tenants')) },
        { path: 'clients', ...lazyPage('clients', () => import('./pages/clients')) },
        {
          path: 'issuer-branding',
          ...lazyPage('issuer-branding', () => import('./pages/issuer-branding')),
        },
        { path: 'key-chains', ...lazyPage('key-chains', () => import('./pages/key-chains')) },
        {
          path: 'key-chains/:keyChainId',
          ...lazyPage('key-chains', () => import('./pages/key-chain-detail')),
        },
        {
          path: 'credential-configs',
          ...lazyPage('credential-configs', () => import('./pages/credential-configs')),
        },
        {
          path: 'credential-configs/new',
          ...lazyPage('credential-configs', () => import('./pages/credential-config-editor')),
        },
        {
          path: 'credential-configs/:credentialConfigId/edit',
          ...lazyPage('credential-configs', () => import('./pages/credential-config-editor')),
        },
        {
          path: 'presentation-configs',
          ...lazyPage('presentation-configs', () => import('./pages/presentation-configs')),
        },
        {
          path: 'presentation-configs/new',
          ...lazyPage('presentation-configs', () => import('./pages/presentation-config-editor')),
        },
        {
          path: 'presentation-configs/:presentationConfigId/edit',
          ...lazyPage('presentation-configs', () => import('./pages/presentation-config-editor')),
        },
        { path: 'offers', ...lazyPage('offers', () => import('./pages/offers')) },
        {
          path: 'presentation-requests',
          ...lazyPage('presentation-requests', () => import('./pages/presentation-requests')),
        },
        { path: 'sessions', ...lazyPage('sessions', () => import('./pages/sessions')) },
        { path: 'sessions/:sessionId', ...lazyPage('sessions', () => import('./pages/session-detail')) },
        { path: 'status-lists', ...lazyPage('status-lists', () => import('./pages/status-lists')) },
        ...OPERATIONS_ROUTES,
        { path: 'health', ...lazyPage('health', () => import('./pages/health')) },
        { path: '*', element: <NotFound /> },
      ],
    },
  ],
  { basename: '/console' },
)

/** The first page the roles allow. */
function FirstPage() {
  const session = useSession()
  const first = PAGE_KEYS.find((page) => PAGES[page].read.length > 0 && canRead(session, page)) ?? 'health'
  return <Navigate to={PAGES[first].path} replace />
}

function NotFound() {
  return (
    <Stack>
      <PageTitle title="Page not found" />
      <Alert color="yellow" role="alert">
        The console has no page at this address. Pick one in the navigation.
      </Alert>
    </Stack>
  )
}

/** Signed out: the sign-in page at any URL; signed in: the page of the URL. */
function Gate() {
  const { session, signOut } = useAuth()
  const queryClient = useQueryClient()
  // A token the API no longer accepts (expired, its client deleted or rotated away) ends the session.
  useEffect(() => {
    // Signed out, a 401 is the sign-in page's own answer (a wrong secret), shown there.
    if (!session) return
    const unauthorized = (error: unknown) => error instanceof ManagementApiError && error.status === 401
    const end = () => signOut('Your session has ended. Sign in again.')
    const queries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'error' && unauthorized(event.action.error)) end()
    })
    const mutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'error' && unauthorized(event.action.error)) end()
    })
    return () => {
      queries()
      mutations()
    }
  }, [queryClient, session, signOut])
  return session ? <RouterProvider router={router} /> : <SignInPage />
}

/**
 * The nonce the Content-Security-Policy allows inline `<style>` elements with, which Mantine writes
 * its theme variables into (apps/management/src/routes/console.ts).
 */
const styleNonce = document.querySelector<HTMLMetaElement>('meta[name="csp-style-nonce"]')?.content ?? ''

/**
 * Mantine's dimmed text (descriptions, hints) is gray 6 and its error text red 6, both under WCAG
 * AA contrast on white (axe color-contrast, serious): gray 7 and red 9 are over 4.5:1.
 */
const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    // Field errors: red 6 on white is 3.3:1.
    '--mantine-color-error': 'var(--mantine-color-red-9)',
  },
  dark: {},
})

/** Filled buttons in shade 8: white on the default shade 6 is under 4.5:1 (axe color-contrast). */
const theme = createTheme({
  primaryShade: { light: 8, dark: 8 },
  // No animated transitions for people who asked their system for less motion.
  respectReducedMotion: true,
  // Dialogs' close buttons are icons: give them a name (axe button-name).
  components: {
    Modal: Modal.extend({
      defaultProps: {
        closeButtonProps: { 'aria-label': 'Close' },
        // The scroll lock (react-remove-scroll) writes a <style> without the CSP nonce.
        lockScroll: false,
      },
    }),
    // A dialog's title bar is a <div>, not a <header>: a <header> outside sectioning content is a
    // banner landmark, and an open dialog beside the shell's header made two (axe
    // landmark-no-duplicate-banner). The dialog's role and aria-labelledby still name it.
    ModalHeader: Modal.Header.extend({ defaultProps: { component: 'div' } as Record<string, unknown> }),
    // An alert's colour is its border and background; its text stays the body colour (contrast).
    Alert: Alert.extend({ styles: { title: { color: 'var(--mantine-color-text)' } } }),
  },
})

export function App() {
  useDialogFirstField()
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          // A refused request (4xx) is an answer, not a glitch: no retries for it.
          queries: {
            retry: (count, error) =>
              !(error instanceof ManagementApiError && error.status >= 400 && error.status < 500) &&
              count < 2,
            refetchOnWindowFocus: false,
          },
        },
      }),
  )
  return (
    <MantineProvider
      theme={theme}
      getStyleNonce={() => styleNonce}
      cssVariablesResolver={cssVariablesResolver}
    >
      <Notifications position="top-right" />
      <QueryClientProvider client={queryClient}>
        <AuthProvider>
          <Gate />
        </AuthProvider>
      </QueryClientProvider>
    </MantineProvider>
  )
}
