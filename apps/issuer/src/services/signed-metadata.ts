import type { CredentialIssuerMetadata } from '@credential-service/core-domain'
import { signJws } from '@credential-service/crypto'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'

/**
 * Signed credential issuer metadata (OpenID4VCI 1.0 §12.2.3): the metadata's parameters with `sub`
 * (the issuer identifier) and `iat` in a JWT of type `openidvci-issuer-metadata+jwt`, signed with
 * the key chain of the tenant's first configuration (its certificates in `x5c`). Undefined without
 * a configuration: no key to sign with, the metadata is answered unsigned. A federation member's
 * JWT carries its trust chain in the `trust_chain` header (OpenID Federation 1.0 §4.3): the leaf's
 * `openid_credential_issuer` metadata names the signing key in `jwks`.
 */
export async function signedIssuerMetadata(
  scope: TenantScope<Pick<ProtocolDeps, 'keys' | 'now'>>,
  metadata: CredentialIssuerMetadata,
  configs: readonly { keyChainId: string }[],
  trustChain?: readonly string[],
): Promise<string | undefined> {
  const first = configs[0]
  if (!first) return undefined
  const signer = await scope.deps.keys.signer(scope.tenantId, first.keyChainId)
  const now = Math.floor(scope.deps.now().getTime() / 1000)
  return signJws(
    signer,
    {
      typ: 'openidvci-issuer-metadata+jwt',
      kid: signer.kid,
      ...(signer.x5c.length ? { x5c: signer.x5c } : {}),
      ...(trustChain ? { trust_chain: [...trustChain] } : {}),
    },
    { ...metadata, sub: scope.issuerUrl, iat: now },
  )
}
