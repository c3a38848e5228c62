import type { OutboundUrlPolicy } from '@credential-service/core-domain'
import { fingerprintsMatch, masterSecretFingerprint } from '@credential-service/crypto'
import type { Database } from '@credential-service/db-schema'
import { recordedMasterSecretFingerprint } from '@credential-service/db-schema'
import { pendingMigrations } from '@credential-service/db-schema/client'
import { keyChainProviderGaps } from './config-import/key-chain-files'
import { readConfigDir } from './config-import/read-config-dir'
import { validateTenantFolder } from './config-import/validate-tenant'

export interface UpgradeCheckOptions {
  /** Configuration folder to check (CONFIG_IMPORT_DIR). */
  dir?: string | undefined
  env: Record<string, string | undefined>
  outbound: OutboundUrlPolicy
  database?: Database | undefined
  masterSecret?: string | undefined
}

/**
 * `upgrade:check`: everything that would stop 5.0 from starting or importing, before the upgrade.
 * Reads the configuration folder and the database; writes nothing.
 */
export async function upgradeCheck(options: UpgradeCheckOptions): Promise<string[]> {
  const findings: string[] = []
  if (options.dir) {
    const tree = readConfigDir(options.dir, options.env)
    for (const folder of tree.tenants) {
      const { issues } = validateTenantFolder(folder, options.outbound)
      // A key chain's provider this process is not set up for: its import would be refused.
      const gaps = folder.files['key-chains'].flatMap((file) =>
        keyChainProviderGaps(file.json, options.env).map((gap) => ({ file: file.file, ...gap })),
      )
      for (const issue of [...(tree.issues.get(folder.tenant) ?? []), ...issues, ...gaps]) {
        findings.push(`config ${issue.file}${issue.path ? ` ${issue.path}` : ''}: ${issue.message}`)
      }
    }
  }
  if (options.database) {
    const pending = await pendingMigrations(options.database)
    if (pending.length)
      findings.push(
        `database: ${pending.length} pending migration(s): ${pending.join(', ')} (applied at the next start; back up first)`,
      )
    if (options.masterSecret) {
      const recorded = await recordedMasterSecretFingerprint(options.database)
      if (recorded && !fingerprintsMatch(recorded, masterSecretFingerprint(options.masterSecret))) {
        findings.push(
          'database: MASTER_SECRET differs from the one the database was set up with; the service would not start',
        )
      }
    }
  }
  return findings
}
