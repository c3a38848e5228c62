import { join } from 'node:path'
import type { ManagementConfig } from '@credential-service/management'

/**
 * What `npm start` prints once it listens. A generated root secret is shown, since nobody else
 * knows it; one set in the environment is not: the operator has it, and stdout goes to log
 * collectors.
 */
export function startupBanner(config: ManagementConfig, env: Record<string, string | undefined>): string {
  const secretsFile = join(env.DATA_DIR ?? '.data', 'dev-secrets.json')
  const rootSecret = !config.AUTH_CLIENT_SECRET
    ? '(OIDC mode)'
    : env.AUTH_CLIENT_SECRET
      ? '(from AUTH_CLIENT_SECRET)'
      : `${config.AUTH_CLIENT_SECRET}  (generated, kept in ${secretsFile})`
  return [
    `credential service (all-in-one) at ${config.PUBLIC_URL}`,
    `  console:       ${config.PUBLIC_URL}/console/  (sign in with the root client below)`,
    `  database:      ${config.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.PGLITE_DATA_DIR}`}`,
    `  API docs:      ${config.PUBLIC_URL}/api/docs`,
    `  root client:   ${config.AUTH_CLIENT_ID ?? '(OIDC mode)'}`,
    `  root secret:   ${rootSecret}`,
    `  get a token:   curl -s -u '${config.AUTH_CLIENT_ID}:<secret>' -d grant_type=client_credentials ${config.PUBLIC_URL}/api/oauth2/token`,
  ].join('\n')
}
