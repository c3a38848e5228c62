import type { Database } from '@credential-service/db-schema'
import {
  backgroundWork,
  createKeyRuntime,
  createTenantCache,
  type KeyRuntime,
  oauthErrorHandler,
  outboundPolicy,
  parseEnv,
  type TenantCache,
  webhookPolicy,
  zCommonEnv,
} from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'
import { requestRoutes } from './routes/requests'

export { createMdocContext } from './services/mdoc-context'
// The bench's ceiling probe verifies presentations exactly as the response endpoint does.
export { verifySdJwtPresentation } from './services/sd-jwt-presentation'

export const zVerifierEnv = zCommonEnv
export type VerifierConfig = Readonly<z.output<typeof zVerifierEnv>>
export const parseVerifierConfig = (env: Record<string, string | undefined>): VerifierConfig =>
  parseEnv(zVerifierEnv, env)

export interface VerifierDeps {
  config: VerifierConfig
  database: { db: Database }
  /** Key access shared with the other apps of the process; built from the config when absent. */
  keys?: KeyRuntime
  /** Tenant settings and configurations shared with the other apps of the process. */
  tenants?: TenantCache
  now?: () => Date
}

/** Wallet-facing OpenID4VP endpoints under `/verifiers/{tenant}` (DESIGN.md). */
export function buildVerifierApp(deps: VerifierDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(oauthErrorHandler)
    const keys = deps.keys ?? createKeyRuntime({ config: deps.config, db: deps.database.db })
    const tenants = deps.tenants ?? createTenantCache({ db: deps.database.db })
    await app.register(
      requestRoutes({
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
