import {
  createManagementClient,
  type ManagementClient,
  requestClientCredentialsToken,
} from '@credential-service/sdk'
import { useQueryClient } from '@tanstack/react-query'
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react'
import { type Session, sessionOf } from './session'

interface Auth {
  session: Session | undefined
  /** The management API client of the session (the SDK, the console's only API client). */
  api: ManagementClient | undefined
  /** Why the last session ended on its own (expired, refused), shown on the sign-in page. */
  notice: string | undefined
  /** The tenant the pages act on: the token's, or the one an operator picked. */
  activeTenant: string | undefined
  pickTenant(tenantId: string | undefined): void
  signIn(clientId: string, clientSecret: string): Promise<void>
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
      signIn,
      signOut,
    }),
    [session, api, notice, picked, signIn, signOut],
  )
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>
}
