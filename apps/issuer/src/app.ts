import { purgeExpiredNonces } from '@credential-service/db-schema'
import {
  oauthErrorHandler,
  type ProtocolAppOptions,
  parseEnv,
  protocolDeps,
  registerRateLimits,
  scheduleJob,
  zCommonEnv,
} from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'
import { jwksRoutes } from './routes/jwks'
import { oid4vciRoutes } from './routes/oid4vci'
import { statusListRoutes } from './routes/status-lists'

export const zIssuerEnv = zCommonEnv
export type IssuerConfig = Readonly<z.output<typeof zIssuerEnv>>
export const parseIssuerConfig = (env: Record<string, string | undefined>): IssuerConfig =>
  parseEnv(zIssuerEnv, env)

export interface IssuerDeps extends ProtocolAppOptions {
  config: IssuerConfig
  /** How often expired nonces are deleted (default 60 s; 0 = never, for tests that count rows). */
  noncePurgeSeconds?: number
}

/**
 * Wallet-facing OpenID4VCI endpoints under `/issuers/{tenant}` and `/.well-known/*` (DESIGN.md).
 * Protocol errors render as OAuth error responses.
 */
export function buildIssuerApp(options: IssuerDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(oauthErrorHandler)
    const deps = protocolDeps(app, options)
    deps.metrics.observeRequests(app, 'issuer')
    const purgeEvery = options.noncePurgeSeconds ?? 60
    // Every issuer pod purges; the batched deletes do not conflict.
    if (purgeEvery > 0) {
      scheduleJob(app, 'nonce purge', purgeEvery, async () => {
        while ((await purgeExpiredNonces(deps.db, deps.now(), 1000)) === 1000) {}
      })
    }
    await registerRateLimits(app, { store: options.config.RATE_LIMIT_STORE, db: deps.db })
    await app.register(jwksRoutes(deps))
    await app.register(statusListRoutes(deps))
    await app.register(
      oid4vciRoutes(deps, {
        perIp: options.config.RATE_LIMIT_WALLET_PER_MINUTE,
        perTenant: options.config.RATE_LIMIT_WALLET_TENANT_PER_MINUTE,
      }),
    )
  }
}
