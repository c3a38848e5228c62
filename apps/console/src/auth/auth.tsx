import {
  createManagementClient,
  type ManagementClient,
  requestClientCredentialsToken,
} from '@credential-service/sdk'
import { useQueryClient } from '@tanstack/react-query'
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react'
import { type ConsoleConfig, completeOidcSignIn, consoleConfig, startOidcSignIn } from './oidc-sign-in'
import { type Session, sessionOf, subjectOf } from './session'

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

/** The token endpoint of the built-in token server, on the console's own origin. */
const tokenUrl = () => `${window.location.origin}/api/oauth2/token`

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
      if (loaded.mode !== 'oidc') return
      setCompleting(true)
      try {
        const token = await completeOidcSignIn(loaded)
        if (current && token) setSession(sessionOf(subjectOf(token), token, Date.now(), loaded))
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

  const signOut = useCallback(
    (why?: string) => {
      setSession(undefined)
      setPicked(undefined)
      setNotice(why)
      // Nothing read with the old token stays on screen for the next one.
      queryClient.clear()
    },
    [queryClient],
  )

  const signIn = useCallback(async (clientId: string, clientSecret: string) => {
    const token = await requestClientCredentialsToken({ tokenUrl: tokenUrl(), clientId, clientSecret })
    setNotice(undefined)
    setSession(sessionOf(clientId, token))
  }, [])

  const signInWithProvider = useCallback(async () => {
    if (config?.mode !== 'oidc') throw new Error('The console signs in with client credentials here.')
    await startOidcSignIn(config, `${window.location.pathname}${window.location.search}`)
  }, [config])

  // The token is not renewed (the console keeps no secret): at its expiry the console signs out.
  useEffect(() => {
    if (!session) return
    const timer = setTimeout(
      () => signOut('Your session expired. Sign in again.'),
      Math.max(0, session.expiresAt - Date.now()),
    )
    return () => clearTimeout(timer)
  }, [session, signOut])

  const api = useMemo(
    () =>
      session &&
      createManagementClient({ baseUrl: window.location.origin, accessToken: () => session.accessToken }),
    [session],
  )

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
