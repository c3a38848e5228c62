import { runProcess } from '@credential-service/server-kit'
import { buildIssuerApp, parseIssuerConfig } from './app'

// Standalone issuer process (production): needs DATABASE_URL.
await runProcess({
  name: 'issuer',
  parseConfig: parseIssuerConfig,
  allowEmbeddedDatabase: false,
  build: async (config, database) => [buildIssuerApp({ config, database })],
})
