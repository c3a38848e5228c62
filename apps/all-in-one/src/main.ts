import { runProcess } from '@credential-service/server-kit'
import { composeApps } from './compose'
import { parseAllInOneConfig } from './config'

await runProcess({
  name: 'all-in-one',
  parseConfig: parseAllInOneConfig,
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
