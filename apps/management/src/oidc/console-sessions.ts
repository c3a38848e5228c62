import { createJwkCipher } from '@credential-service/crypto'
import { createConsoleOidcSessionRepository, type Database } from '@credential-service/db-schema'
import type { ManagementConfig } from '../config'
import {
  createConsoleOidcSessionService,
  type ProviderTokens,
} from '../services/console-oidc-session-service'
import type { OidcMode } from './oidc-mode'

/** A token request (RFC 6749 §4.1.3, §6) of the console's public client at the provider. */
async function tokenRequest(tokenUrl: string, params: Record<string, string>): Promise<ProviderTokens> {
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(params),
    signal: AbortSignal.timeout(5000),
  })
  const body = (await response.json().catch(() => ({}))) as Partial<ProviderTokens> & { error?: unknown }
  if (!response.ok || typeof body.access_token !== 'string' || typeof body.expires_in !== 'number')
    throw new Error(`the identity provider answered ${response.status} ${String(body.error ?? '')}`)
  return body as ProviderTokens
}

/**
 * The console's sessions in OIDC mode: the code and refresh token grants go to the provider's
 * token endpoint from this process (as the console's public client), the tokens are sealed with
 * MASTER_SECRET in `console_oidc_sessions`.
 */
export function consoleOidcSessions(
  config: ManagementConfig,
  db: Database,
  oidc: OidcMode,
  clientId: string,
) {
  return createConsoleOidcSessionService({
    sessions: createConsoleOidcSessionRepository(db, { idleSeconds: config.CONSOLE_SESSION_IDLE_SECONDS }),
    cipher: createJwkCipher(config.MASTER_SECRET),
    verify: oidc.verify,
    exchangeCode: async (input) =>
      tokenRequest(await oidc.serverTokenUrl(), {
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: input.redirectUri,
        client_id: clientId,
        code_verifier: input.codeVerifier,
      }),
    refresh: async (refreshToken) =>
      tokenRequest(await oidc.serverTokenUrl(), {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: clientId,
      }),
    maxSeconds: config.CONSOLE_SESSION_MAX_SECONDS,
  })
}
