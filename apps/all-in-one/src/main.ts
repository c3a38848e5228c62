import { join } from 'node:path'
import { parseManagementConfig } from '@credential-service/management'
import { runProcess } from '@credential-service/server-kit'
import { composeApps } from './compose'
import { loadOrCreateDevSecrets } from './dev-secrets'

/**
 * All-in-one mode (`npm start`): the three apps on one origin, on the embedded database unless
 * DATABASE_URL is set. Missing secrets come from `<data>/dev-secrets.json`.
 */
function parseConfig(env: Record<string, string | undefined>) {
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

await runProcess({
  name: 'all-in-one',
  parseConfig,
  allowEmbeddedDatabase: true,
  build: composeApps,
  onListening: (config) => {
    const lines = [
      `credential service (all-in-one) at ${config.PUBLIC_URL}`,
      `  database:      ${config.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.PGLITE_DATA_DIR}`}`,
      `  API docs:      ${config.PUBLIC_URL}/api/docs`,
      `  root client:   ${config.AUTH_CLIENT_ID ?? '(OIDC mode)'}`,
      `  root secret:   ${config.AUTH_CLIENT_SECRET ? `${config.AUTH_CLIENT_SECRET}  (from env or ${process.env.DATA_DIR ?? '.data'}/dev-secrets.json)` : '(OIDC mode)'}`,
      `  get a token:   curl -s -u '${config.AUTH_CLIENT_ID}:<secret>' -d grant_type=client_credentials ${config.PUBLIC_URL}/api/oauth2/token`,
    ]
    console.log(lines.join('\n'))
  },
})
