import { join } from 'node:path'
import { type ManagementConfig, parseManagementConfig, zManagementEnv } from '@credential-service/management'
import { parseEnv, zCommonEnv } from '@credential-service/server-kit'
import type { z } from 'zod'
import { loadOrCreateDevSecrets, readDevSecrets } from './dev-secrets'

/** Set values only: an empty variable counts as unset, as in the zod schemas. */
const setValues = (env: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))

/** Defaults both the dev entry and the operator commands derive from `<DATA_DIR>` and `PORT`. */
function localDefaults(env: Record<string, string | undefined>) {
  const dataRoot = env.DATA_DIR || '.data'
  return {
    dataRoot,
    devSecretsFile: join(dataRoot, 'dev-secrets.json'),
    defaults: {
      PGLITE_DATA_DIR: join(dataRoot, 'pglite'),
      PUBLIC_URL: `http://localhost:${env.PORT || '3000'}`,
    },
  }
}

/**
 * The all-in-one dev entry (`npm start`): the management configuration, with `PUBLIC_URL`, the
 * embedded database folder and missing secrets defaulted from `<DATA_DIR>`. It listens on
 * 127.0.0.1 unless HOST says otherwise: a development server with generated secrets is not for
 * the network (the image sets HOST=0.0.0.0).
 */
export function parseAllInOneConfig(env: Record<string, string | undefined>): ManagementConfig {
  const { devSecretsFile, defaults } = localDefaults(env)
  const dev = loadOrCreateDevSecrets(devSecretsFile)
  return parseManagementConfig({
    ...defaults,
    HOST: '127.0.0.1',
    MASTER_SECRET: dev.MASTER_SECRET,
    ...(env.OIDC ? {} : { AUTH_CLIENT_ID: dev.AUTH_CLIENT_ID, AUTH_CLIENT_SECRET: dev.AUTH_CLIENT_SECRET }),
    ...setValues(env),
  })
}

/** What the operator commands read: the common variables and the import folder, no root client. */
export const zOperatorEnv = zCommonEnv.extend({ CONFIG_IMPORT_DIR: zManagementEnv.shape.CONFIG_IMPORT_DIR })
export type OperatorConfig = Readonly<z.output<typeof zOperatorEnv>>

/**
 * The operator commands (`config:import`, `upgrade:check`): they never invent a MASTER_SECRET,
 * since data written under an invented secret could never be decrypted by the real service. On
 * the embedded database (DATABASE_URL unset) they reuse the secret an earlier `npm start`
 * generated for that database, if any; otherwise MASTER_SECRET must be set.
 */
export function parseOperatorConfig(env: Record<string, string | undefined>): OperatorConfig {
  const { devSecretsFile, defaults } = localDefaults(env)
  const dev = env.DATABASE_URL ? undefined : readDevSecrets(devSecretsFile)
  return parseEnv(zOperatorEnv, {
    ...defaults,
    ...(dev ? { MASTER_SECRET: dev.MASTER_SECRET } : {}),
    ...setValues(env),
  })
}
