import { runProcess } from '@credential-service/server-kit'
import { buildVerifierApp, parseVerifierConfig } from './app'

// Standalone verifier process (production): needs DATABASE_URL.
await runProcess({
  name: 'verifier',
  parseConfig: parseVerifierConfig,
  allowEmbeddedDatabase: false,
  build: async (config, database) => [buildVerifierApp({ config, database })],
})
