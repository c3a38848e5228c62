import { createManagementClient, type ManagementClient } from '@credential-service/sdk'
import { useQueryClient } from '@tanstack/react-query'
import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react'
import { type ConsoleConfig, completeOidcSignIn, consoleConfig, startOidcSignIn } from './oidc-sign-in'
import {
  endSession,
  resumeSession,
  sessionFetch,
  startSession,
  type TabMessage,
  tabChannel,
} from './server-session'
import type { Session } from './session'

interface Auth {
  session: Session | undefined
  /** The management API client of the session (the SDK, the console's only API client). */
  api: ManagementClient | undefined
  /** Why the last session ended on its own (expired, refused), shown on the sign-in page. */
  notice: string | undefined
  /** The tenant the pages act on: the token's, or the one an operator picked. */
  activeTenant: string | undefined
  pickTenant(tenantId: string | undefined): void
  /** How to sign in: client credentials, or the identity provider's login (OIDC mode). */
  config: ConsoleConfig | undefined
  /** The configuration could not be read: the sign-in page says so. */
  configError: unknown
  /** Coming back from the provider: the code is being exchanged. */
  completing: boolean
  signIn(clientId: string, clientSecret: string): Promise<void>
  /** OIDC mode: leaves for the provider's login (authorization code + PKCE). */
  signInWithProvider(): Promise<void>
  signOut(notice?: string): void
}

const AuthContext = createContext<Auth | undefined>(undefined)

export function useAuth(): Auth {
  const auth = useContext(AuthContext)
  if (!auth) throw new Error('useAuth outside AuthProvider')
  return auth
}

/** The signed-in session, for pages that only render once signed in. */
export function useSession(): Session & { api: ManagementClient; activeTenant: string | undefined } {
  const { session, api, activeTenant } = useAuth()
  if (!session || !api) throw new Error('useSession while signed out')
  return { ...session, api, activeTenant }
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient()
  const [session, setSession] = useState<Session>()
  const [picked, setPicked] = useState<string>()
  const [notice, setNotice] = useState<string>()
  const [config, setConfig] = useState<ConsoleConfig>()
  const [configError, setConfigError] = useState<unknown>()
  const [completing, setCompleting] = useState(false)

  // The sign-in mode, and in OIDC mode the provider's answer if the page was loaded with one.
  useEffect(() => {
    let current = true
    void (async () => {
      let loaded: ConsoleConfig
      try {
        loaded = await consoleConfig()
      } catch (error) {
        if (current) setConfigError(error)
        return
      }
      if (!current) return
      setConfig(loaded)
      // Reload, new tab, deep link: the service's session, if this browser has one; in OIDC mode
      // coming back from the provider makes a new one first.
      setCompleting(true)
      try {
        const started = loaded.mode === 'oidc' ? await completeOidcSignIn(loaded) : undefined
        const resumed = started ?? (await resumeSession())
        if (current && resumed) setSession(resumed)
        if (started) channel.current?.postMessage('signed-in' satisfies TabMessage)
      } catch (error) {
        if (current) setNotice(error instanceof Error ? error.message : String(error))
      } finally {
        if (current) setCompleting(false)
      }
    })()
    return () => {
      current = false
    }
  }, [])

  const channel = useRef<BroadcastChannel | undefined>(undefined)

  const forget = useCallback(
    (why?: string) => {
      setSession(undefined)
      setPicked(undefined)
      setNotice(why)
      // Nothing read with the old token stays on screen for the next one.
      queryClient.clear()
    },
    [queryClient],
  )

  const signOut = useCallback(
    (why?: string) => {
      const csrf = session?.csrfToken
      forget(why)
      if (!csrf) return
      // The service ends the session (every tab's), then the other tabs hear of it.
      void endSession(csrf).then(() => channel.current?.postMessage('signed-out' satisfies TabMessage))
    },
    [forget, session],
  )

  const signIn = useCallback(async (clientId: string, clientSecret: string) => {
    const started = await startSession(clientId, clientSecret)
    setNotice(undefined)
    setSession(started)
    channel.current?.postMessage('signed-in' satisfies TabMessage)
  }, [])

  // Another tab signed out (the session is gone for this one too) or in (this one can join it).
  useEffect(() => {
    const opened = tabChannel()
    channel.current = opened
    if (!opened) return
    opened.onmessage = (event: MessageEvent<TabMessage>) => {
      if (event.data === 'signed-out') forget('You signed out in another tab.')
      if (event.data === 'signed-in')
        void resumeSession().then((resumed) => {
          if (resumed) {
            queryClient.clear()
            setNotice(undefined)
            setSession(resumed)
          }
        })
    }
    return () => {
      opened.close()
      channel.current = undefined
    }
  }, [forget, queryClient])

  const signInWithProvider = useCallback(async () => {
    if (config?.mode !== 'oidc') throw new Error('The console signs in with client credentials here.')
    await startOidcSignIn(config, `${window.location.pathname}${window.location.search}`)
  }, [config])

  // At the session's absolute end the console signs out (the service renews the provider's
  // token in OIDC mode). The idle timeout shows as a 401 (app.tsx).
  useEffect(() => {
    if (!session) return
    const timer = setTimeout(
      () => forget('Your session expired. Sign in again.'),
      // setTimeout fires at once past 2^31 - 1 ms.
      Math.min(2 ** 31 - 1, Math.max(0, session.expiresAt - Date.now())),
    )
    return () => clearTimeout(timer)
  }, [session, forget])

  const api = useMemo(() => {
    if (!session) return undefined
    // A server session sends no token (the SDK sends no Authorization for an empty one): the
    // cookie and its CSRF header stand in for it.
    return createManagementClient({
      baseUrl: window.location.origin,
      accessToken: () => '',
      fetch: sessionFetch(session.csrfToken),
    })
  }, [session])

  const value = useMemo<Auth>(
    () => ({
      session,
      api,
      notice,
      activeTenant: session?.tenantId ?? picked,
      pickTenant: setPicked,
      config,
      configError,
      completing,
      signIn,
      signInWithProvider,
      signOut,
    }),
    [session, api, notice, picked, config, configError, completing, signIn, signInWithProvider, signOut],
  )
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>
}
