import { deriveManagementSigningKey } from '@credential-service/crypto'
import { createKeyRuntime, runProcess } from '@credential-service/server-kit'
import { bootstrapRootClient, buildManagementApp, importAtStartup, parseManagementConfig } from './app'

// Standalone management process (production): needs DATABASE_URL.
await runProcess({
  name: 'management',
  parseConfig: parseManagementConfig,
  allowEmbeddedDatabase: false,
  build: async (config, database, env) => {
    await bootstrapRootClient(database.db, config)
    const keys = createKeyRuntime({ config, db: database.db })
    await importAtStartup(config, database.db, keys, env)
    const signingKey = await deriveManagementSigningKey(config.MASTER_SECRET)
    return [buildManagementApp({ config, database, signingKey, keys })]
  },
})
