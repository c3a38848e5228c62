import { generateSecret, hashSecret } from '@credential-service/crypto'
import { type Database, upsertOperatorClient } from '@credential-service/db-schema'
import type { ManagementConfig } from './config'

/**
 * Spec §5.3: the root client from AUTH_CLIENT_ID / AUTH_CLIENT_SECRET is created or updated at
 * start as an operator (`tenant:manage`, no tenant). In OIDC mode (spec §5.4) the record is
 * written the same way but with the hash of a random value (the provider holds the secret), and
 * the app pushes the client to the provider once it is ready (oidc/oidc-mode.ts).
 */
export async function bootstrapRootClient(
  db: Database,
  config: ManagementConfig,
): Promise<'created' | 'updated' | 'skipped'> {
  if (!config.AUTH_CLIENT_ID || !config.AUTH_CLIENT_SECRET) return 'skipped'
  const secret = config.OIDC === undefined ? config.AUTH_CLIENT_SECRET : generateSecret()
  return upsertOperatorClient(db, {
    clientId: config.AUTH_CLIENT_ID,
    secretHash: await hashSecret(secret),
    roles: ['tenant:manage'],
  })
}
