import { oauthErrorHandler, parseEnv, zCommonEnv } from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'

export const zIssuerEnv = zCommonEnv
export type IssuerConfig = Readonly<z.output<typeof zIssuerEnv>>
export const parseIssuerConfig = (env: Record<string, string | undefined>): IssuerConfig =>
  parseEnv(zIssuerEnv, env)

export interface IssuerDeps {
  config: IssuerConfig
}

/**
 * Wallet-facing OpenID4VCI endpoints under `/issuers/{tenant}` and `/.well-known/*` (DESIGN.md).
 * Protocol errors render as OAuth error responses.
 */
export function buildIssuerApp(_deps: IssuerDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(oauthErrorHandler)
  }
}
