import { createDatabase } from '@credential-service/db-schema/client'
import { ConfigError, parseEnv, zCommonEnv } from '@credential-service/server-kit'
import { CONFIG_ERROR_EXIT } from './operator-config'

// `pnpm db:migrate` (the image's `db:migrate`, a Kubernetes Job per rollout): applies migrations to
// DATABASE_URL, or to the embedded database in PGLITE_DATA_DIR (default <DATA_DIR>/pglite, as
// `npm start` uses). Needs no MASTER_SECRET: the schema holds no secret.
const zMigrateEnv = zCommonEnv.pick({ DATABASE_URL: true, PGLITE_DATA_DIR: true })
let config: Readonly<{ DATABASE_URL?: string | undefined; PGLITE_DATA_DIR: string }>
try {
  config = parseEnv(zMigrateEnv, {
    PGLITE_DATA_DIR: `${process.env.DATA_DIR || '.data'}/pglite`,
    ...Object.fromEntries(Object.entries(process.env).filter(([, value]) => value)),
  })
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  console.error(`db:migrate: ${error.message}`)
  process.exit(CONFIG_ERROR_EXIT)
}
const database = await createDatabase({ url: config.DATABASE_URL, dataDir: config.PGLITE_DATA_DIR })
try {
  await database.migrate()
  console.log(
    `migrations applied to ${config.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `PGlite at ${config.PGLITE_DATA_DIR}`}`,
  )
} finally {
  await database.close()
}
