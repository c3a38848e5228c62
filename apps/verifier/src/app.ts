import {
  appStatusLists,
  oauthErrorHandler,
  type ProtocolAppOptions,
  parseEnv,
  protocolDeps,
  rateLimitStore,
  registerRateLimits,
  scheduleTrustListRefresh,
  trustListLimits,
  walletLimits,
  zCommonEnv,
} from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'
import { didDocumentRoutes } from './routes/did-document'
import { federationRoutes } from './routes/federation'
import { requestRoutes } from './routes/requests'

export const zVerifierEnv = zCommonEnv
export type VerifierConfig = Readonly<z.output<typeof zVerifierEnv>>
export const parseVerifierConfig = (env: Record<string, string | undefined>): VerifierConfig =>
  parseEnv(zVerifierEnv, env)

export interface VerifierDeps extends ProtocolAppOptions {
  config: VerifierConfig
}

/** Wallet-facing OpenID4VP endpoints under `/verifiers/{tenant}` (DESIGN.md). */
export function buildVerifierApp(options: VerifierDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(oauthErrorHandler)
    const { config } = options
    const deps = {
      ...protocolDeps(app, options),
      statusLists: appStatusLists(app, config),
      dcApiSignedClientIdAudience: config.DC_API_SIGNED_CLIENT_ID_AUDIENCE,
    }
    deps.metrics.observeRequests(app, 'verifier')
    // Every process may run it: each due list is claimed by one of them (claimDueTrustLists).
    scheduleTrustListRefresh(app, config.TRUST_LIST_REFRESH_CHECK_SECONDS, {
      ...deps,
      trustListLimits: trustListLimits(config),
    })
    await registerRateLimits(app, { store: rateLimitStore(options.config), db: deps.db })
    await app.register(requestRoutes(deps, walletLimits(options.config)))
    await app.register(didDocumentRoutes(deps))
    await app.register(federationRoutes(deps))
  }
}
