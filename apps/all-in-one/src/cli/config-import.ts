import { createDatabase } from '@credential-service/db-schema/client'
import { formatImportReport, importConfigDir, importDeps } from '@credential-service/management'
import { createKeyRuntime, verifyMasterSecret } from '@credential-service/server-kit'
import { operatorConfigOrExit } from './operator-config'

// `pnpm config:import [dir]`: imports a configuration folder (default CONFIG_IMPORT_DIR) into
// DATABASE_URL, or into the embedded database of all-in-one mode. Exit 1 when a tenant is rejected,
// 2 on a usage or configuration error (MASTER_SECRET is required: keys are encrypted with it).
const config = operatorConfigOrExit('config:import')
const dir = process.argv[2] ?? config.CONFIG_IMPORT_DIR
if (!dir) {
  console.error('usage: config:import <dir>   (or set CONFIG_IMPORT_DIR)')
  process.exit(2)
}
const database = await createDatabase({
  url: config.DATABASE_URL,
  dataDir: config.PGLITE_DATA_DIR,
  statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
})
try {
  await database.migrate()
  await verifyMasterSecret(database.db, config.MASTER_SECRET)
  const keys = createKeyRuntime({ config, db: database.db })
  const report = await importConfigDir(importDeps(config, database.db, keys), dir, process.env)
  console.log(formatImportReport(report))
  process.exitCode = report.ok ? 0 : 1
} finally {
  await database.close()
}
