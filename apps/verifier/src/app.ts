import { oauthErrorHandler, parseEnv, zCommonEnv } from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'

export const zVerifierEnv = zCommonEnv
export type VerifierConfig = Readonly<z.output<typeof zVerifierEnv>>
export const parseVerifierConfig = (env: Record<string, string | undefined>): VerifierConfig =>
  parseEnv(zVerifierEnv, env)

export interface VerifierDeps {
  config: VerifierConfig
}

/** Wallet-facing OpenID4VP endpoints under `/verifiers/{tenant}` (DESIGN.md). */
export function buildVerifierApp(_deps: VerifierDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(oauthErrorHandler)
  }
}
