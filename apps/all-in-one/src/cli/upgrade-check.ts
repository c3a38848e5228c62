import { createDatabase } from '@credential-service/db-schema/client'
import { upgradeCheck } from '@credential-service/management'
import { outboundPolicy } from '@credential-service/server-kit'
import { operatorConfigOrExit } from './operator-config'

// `pnpm upgrade:check [dir]`: lists everything that would block the 5.0 start-up or import
// (version 1 credential files, the 3.x layout, external key chains without externalKeyId,
// pending migrations, a changed MASTER_SECRET). Exit 1 when anything does, 2 on a configuration
// error (MASTER_SECRET is required, to compare it with the database's). Writes nothing.
const config = operatorConfigOrExit('upgrade:check')
const dir = process.argv[2] ?? config.CONFIG_IMPORT_DIR
const database = await createDatabase({
  url: config.DATABASE_URL,
  dataDir: config.PGLITE_DATA_DIR,
  statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
})
try {
  const findings = await upgradeCheck({
    dir,
    env: process.env,
    outbound: outboundPolicy(config),
    database: database.db,
    masterSecret: config.MASTER_SECRET,
  })
  for (const finding of findings) console.log(finding)
  console.log(findings.length ? `${findings.length} blocking finding(s)` : 'nothing blocks the upgrade')
  process.exitCode = findings.length ? 1 : 0
} finally {
  await database.close()
}
