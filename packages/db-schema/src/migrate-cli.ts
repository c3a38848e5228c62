import { createDatabase } from './client'

// `pnpm db:migrate`: applies migrations to DATABASE_URL, or to the embedded database in PGLITE_DATA_DIR.
const url = process.env.DATABASE_URL
const dataDir = process.env.PGLITE_DATA_DIR ?? '.data/pglite'
const database = await createDatabase({ url, dataDir })
try {
  await database.migrate()
  console.log(`migrations applied to ${url ? 'PostgreSQL (DATABASE_URL)' : `PGlite at ${dataDir}`}`)
} finally {
  await database.close()
}
