import { join } from 'node:path'
import { type ManagementConfig, parseManagementConfig } from '@credential-service/management'
import { loadOrCreateDevSecrets } from './dev-secrets'

/**
 * All-in-one mode (`npm start`, and the operator commands): the management configuration, with
 * `PUBLIC_URL`, the embedded database folder and missing secrets defaulted from `<DATA_DIR>`.
 */
export function parseAllInOneConfig(env: Record<string, string | undefined>): ManagementConfig {
  const dataRoot = env.DATA_DIR ?? '.data'
  const dev = loadOrCreateDevSecrets(join(dataRoot, 'dev-secrets.json'))
  const port = env.PORT ?? '3000'
  const withDefaults = {
    PGLITE_DATA_DIR: join(dataRoot, 'pglite'),
    PUBLIC_URL: `http://localhost:${port}`,
    MASTER_SECRET: dev.MASTER_SECRET,
    ...(env.OIDC ? {} : { AUTH_CLIENT_ID: dev.AUTH_CLIENT_ID, AUTH_CLIENT_SECRET: dev.AUTH_CLIENT_SECRET }),
    ...Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== '')),
  }
  return parseManagementConfig(withDefaults)
}
