import { type Database, purgeExpiredNonces } from '@credential-service/db-schema'
import {
  backgroundWork,
  createKeyRuntime,
  createTenantCache,
  type KeyRuntime,
  oauthErrorHandler,
  outboundPolicy,
  parseEnv,
  scheduleJob,
  type TenantCache,
  webhookPolicy,
  zCommonEnv,
} from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'
import { jwksRoutes } from './routes/jwks'
import { oid4vciRoutes } from './routes/oid4vci'

export const zIssuerEnv = zCommonEnv
export type IssuerConfig = Readonly<z.output<typeof zIssuerEnv>>
export const parseIssuerConfig = (env: Record<string, string | undefined>): IssuerConfig =>
  parseEnv(zIssuerEnv, env)

export interface IssuerDeps {
  config: IssuerConfig
  database: { db: Database }
  /** Key access shared with the other apps of the process; built from the config when absent. */
  keys?: KeyRuntime
  /** Tenant settings and configurations shared with the other apps of the process. */
  tenants?: TenantCache
  now?: () => Date
  /** How often expired nonces are deleted (default 60 s; 0 = never, for tests that count rows). */
  noncePurgeSeconds?: number
}

/**
 * Wallet-facing OpenID4VCI endpoints under `/issuers/{tenant}` and `/.well-known/*` (DESIGN.md).
 * Protocol errors render as OAuth error responses.
 */
export function buildIssuerApp(deps: IssuerDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(oauthErrorHandler)
    const keys = deps.keys ?? createKeyRuntime({ config: deps.config, db: deps.database.db })
    const tenants = deps.tenants ?? createTenantCache({ db: deps.database.db })
    const purgeEvery = deps.noncePurgeSeconds ?? 60
    // Every issuer pod purges; the batched deletes do not conflict.
    if (purgeEvery > 0) {
      const now = deps.now ?? (() => new Date())
      scheduleJob(app, 'nonce purge', purgeEvery, async () => {
        while ((await purgeExpiredNonces(deps.database.db, now(), 1000)) === 1000) {}
      })
    }
    await app.register(jwksRoutes({ db: deps.database.db, keys, publicUrl: deps.config.PUBLIC_URL }))
    await app.register(
      oid4vciRoutes({
        db: deps.database.db,
        keys,
        tenants,
        publicUrl: deps.config.PUBLIC_URL,
        now: deps.now ?? (() => new Date()),
        outbound: outboundPolicy(deps.config),
        webhook: webhookPolicy(deps.config),
        background: backgroundWork(app),
      }),
    )
  }
}
