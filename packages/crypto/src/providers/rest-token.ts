import { KeyProviderError } from './provider'

/** A cloud KMS's REST transport: a 10 s bound per call, an unreachable host reported as an outage. */
export function restRequest(doFetch: typeof fetch) {
  return async (url: string, init: RequestInit, what: string): Promise<Response> => {
    try {
      return await doFetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
    } catch (cause) {
      throw new KeyProviderError(`${what} is unreachable`, { cause, reason: 'unavailable' })
    }
  }
}

/**
 * An OAuth access token (RFC 6749 §5.1) shared by a provider's calls: one token request at a time,
 * kept until a minute before `expires_in`, dropped on a refusal or by `drop` after a 401.
 */
export function tokenCache(fetchToken: () => Promise<Response>, authority: string) {
  let token: { value: Promise<string>; expiresAt: number } | undefined
  return {
    get(): Promise<string> {
      if (token && token.expiresAt > Date.now()) return token.value
      const value = (async () => {
        const response = await fetchToken()
        const json = (await response.json().catch(() => ({}))) as {
          access_token?: string
          expires_in?: number
          error?: string
        }
        if (!response.ok || !json.access_token)
          throw new KeyProviderError(
            `${authority} token request refused: ${json.error ?? `HTTP ${response.status}`}`,
            { reason: response.status >= 500 ? 'unavailable' : 'misconfigured' },
          )
        // A minute early: a token that expires on the way is a 401 (RFC 6750 §3.1).
        token = {
          value: Promise.resolve(json.access_token),
          expiresAt: Date.now() + ((json.expires_in ?? 300) - 60) * 1000,
        }
        return json.access_token
      })()
      token = { value, expiresAt: Date.now() + 30_000 }
      value.catch(() => {
        token = undefined
      })
      return value
    },
    drop(): void {
      token = undefined
    },
  }
}
