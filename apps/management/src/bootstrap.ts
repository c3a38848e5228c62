import { hashSecret } from '@credential-service/crypto'
import { type Database, upsertOperatorClient } from '@credential-service/db-schema'
import type { ManagementConfig } from './config'

/**
 * Spec §5.3: the root client from AUTH_CLIENT_ID / AUTH_CLIENT_SECRET is created or updated at
 * start as an operator (`tenant:manage`, no tenant). In OIDC mode this happens in the identity
 * provider instead (not implemented yet).
 */
export async function bootstrapRootClient(
  db: Database,
  config: ManagementConfig,
): Promise<'created' | 'updated' | 'skipped'> {
  if (config.OIDC !== undefined || !config.AUTH_CLIENT_ID || !config.AUTH_CLIENT_SECRET) return 'skipped'
  return upsertOperatorClient(db, {
    clientId: config.AUTH_CLIENT_ID,
    secretHash: await hashSecret(config.AUTH_CLIENT_SECRET),
    roles: ['tenant:manage'],
  })
}
