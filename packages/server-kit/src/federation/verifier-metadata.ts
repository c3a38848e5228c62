import { VP_FORMATS_SUPPORTED } from '@credential-service/core-domain'
import type { KeyRuntime } from '../key-runtime'
import type { TenantCache } from '../tenant-cache'
import { federationKeyChainOf } from './entity-key'

/**
 * The verifier's federation metadata (`openid_credential_verifier`, OpenID4VP 1.0 §11): the
 * formats it accepts and the keys its request objects are signed with, which a wallet takes from
 * the resolved chain for the `openid_federation` prefix (§5.9.3 ignores `client_metadata` then).
 * The federation key chain is left out: it signs entity statements only.
 */
export async function verifierEntityMetadata(
  deps: { keys: KeyRuntime; tenants: TenantCache },
  tenantId: string,
): Promise<Record<string, Record<string, unknown>>> {
  const { keys } = await deps.keys.jwks(tenantId, await federationKeyChainOf(deps.tenants, tenantId))
  return {
    openid_credential_verifier: {
      vp_formats_supported: VP_FORMATS_SUPPORTED,
      jwks: { keys: keys.map(({ x5c: _x5c, ...jwk }) => jwk) },
    },
  }
}
