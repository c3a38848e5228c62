import { deriveManagementSigningKey } from '@credential-service/crypto'
import { runProcess } from '@credential-service/server-kit'
import { bootstrapRootClient, buildManagementApp, parseManagementConfig } from './app'

// Standalone management process (production): needs DATABASE_URL.
await runProcess({
  name: 'management',
  parseConfig: parseManagementConfig,
  allowEmbeddedDatabase: false,
  build: async (config, database) => {
    await bootstrapRootClient(database.db, config)
    return [
      buildManagementApp({
        config,
        database,
        signingKey: await deriveManagementSigningKey(config.MASTER_SECRET),
      }),
    ]
  },
})
