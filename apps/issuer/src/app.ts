import { deriveKeyMaterial } from '@credential-service/crypto'
import {
  purgeExpiredAuthorizationRequests,
  purgeExpiredJtis,
  purgeExpiredNonces,
} from '@credential-service/db-schema'
import {
  appStatusLists,
  oauthErrorHandler,
  type ProtocolAppOptions,
  parseEnv,
  protocolDeps,
  rateLimitStore,
  registerRateLimits,
  scheduleJob,
  scheduleTrustListRefresh,
  trustListLimits,
  walletLimits,
  zCommonEnv,
} from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'
import { createExternalTokens } from './external-tokens/check-token'
import { crlRoutes } from './routes/crl'
import { jwksRoutes } from './routes/jwks'
import { logoRoutes } from './routes/logos'
import { oid4vciRoutes } from './routes/oid4vci'
import { statusListRoutes } from './routes/status-lists'
import { C_NONCE_SECONDS, createCNonces } from './services/c-nonces'
import { createServerNonces } from './services/server-nonces'

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
    const base = protocolDeps(app, options)
    const deps = {
      ...base,
      dpop: {
        nonces: createServerNonces(deriveKeyMaterial(options.config.MASTER_SECRET, 'dpop-nonce'), base.now),
        nonceRequired: options.config.DPOP_NONCE_REQUIRED,
      },
      cNonces: createCNonces(
        deriveKeyMaterial(options.config.MASTER_SECRET, 'c-nonce'),
        C_NONCE_SECONDS,
        base.now,
      ),
      attestationChallenges: createServerNonces(
        deriveKeyMaterial(options.config.MASTER_SECRET, 'attestation-challenge'),
        base.now,
      ),
      // Presentations during issuance are verified here too (Interactive Authorization).
      statusLists: appStatusLists(app, options.config),
      // External authorization servers' metadata, JWKS and introspection answers (this process's).
      externalTokens: createExternalTokens({ outbound: base.outbound, now: base.now }),
    }
    deps.metrics.observeRequests(app, 'issuer')
    // Every process may run it: each due list is claimed by one of them (claimDueTrustLists).
    scheduleTrustListRefresh(app, options.config.TRUST_LIST_REFRESH_CHECK_SECONDS, {
      ...deps,
      trustListLimits: trustListLimits(options.config),
    })
    const purgeEvery = options.noncePurgeSeconds ?? 60
    // Every issuer pod purges; the batched deletes do not conflict.
    if (purgeEvery > 0) {
      scheduleJob(app, 'nonce purge', purgeEvery, async () => {
        while ((await purgeExpiredNonces(deps.db, deps.now(), 1000)) === 1000) {}
        // Abandoned pushed requests, unused codes and expired refresh grants (OpenID4VCI §5).
        while ((await purgeExpiredAuthorizationRequests(deps.db, deps.now(), 1000)) === 1000) {}
        // DPoP and attestation proof ids past their replay window.
        while ((await purgeExpiredJtis(deps.db, deps.now(), 1000)) === 1000) {}
      })
    }
    await registerRateLimits(app, { store: rateLimitStore(options.config), db: deps.db })
    await app.register(jwksRoutes(deps))
    await app.register(crlRoutes(deps))
    await app.register(logoRoutes(deps))
    await app.register(statusListRoutes(deps))
    await app.register(oid4vciRoutes(deps, walletLimits(options.config)))
  }
}
