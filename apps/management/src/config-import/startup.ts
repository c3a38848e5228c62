import { createSecretVerifier } from '@credential-service/crypto'
import type { Database } from '@credential-service/db-schema'
import { ConfigError, type KeyRuntime, outboundPolicy } from '@credential-service/server-kit'
import type { ManagementConfig } from '../config'
import type { ApplyDeps } from './apply-tenant'
import { formatImportReport, type ImportReport, importConfigDir } from './import-config'

/** What an import reads of the configuration: the operator commands have no root client to pass. */
export function importDeps(
  config: Pick<
    ManagementConfig,
    'PUBLIC_URL' | 'OUTBOUND_ALLOW_HTTP' | 'OUTBOUND_ALLOWED_HOSTS' | 'OUTBOUND_MAX_RESPONSE_BYTES'
  >,
  db: Database,
  keys: KeyRuntime,
  now: () => Date = () => new Date(),
) {
  const outbound = outboundPolicy(config)
  const keyChains = { db, keys, publicUrl: config.PUBLIC_URL, now }
  const deps: ApplyDeps & { outbound: typeof outbound } = {
    keyChains,
    configs: { db, cipher: keys.cipher, outbound, keyChains },
    verifySecret: createSecretVerifier(),
    outbound,
  }
  return deps
}

/**
 * Start-up import of CONFIG_IMPORT_DIR. A rejected tenant stops the start with the report, so a
 * deployment never runs on half its declared configuration.
 */
export async function importAtStartup(
  config: ManagementConfig,
  db: Database,
  keys: KeyRuntime,
  env: Record<string, string | undefined>,
): Promise<ImportReport | undefined> {
  if (!config.CONFIG_IMPORT_DIR) return undefined
  const report = await importConfigDir(importDeps(config, db, keys), config.CONFIG_IMPORT_DIR, env)
  if (!report.ok)
    throw new ConfigError([
      `configuration import from ${config.CONFIG_IMPORT_DIR} failed:\n${formatImportReport(report)}`,
    ])
  return report
}
