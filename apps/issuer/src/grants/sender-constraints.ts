import { type CredentialConfig, ProtocolError } from '@credential-service/core-domain'
import type { GrantContext } from './grant-context'

/** The tenant's configurations (cached) whose DPoP or attestation requirement the request does not meet. */
export async function unconstrainedConfigs(context: GrantContext): Promise<CredentialConfig[]> {
  if (context.dpopJkt && context.walletClient) return []
  return (await context.deps.tenants.credentialConfigs(context.tenantId)).filter(
    (c) =>
      (!context.dpopJkt && c.dpop === 'required') ||
      (!context.walletClient && c.walletAttestation === 'required'),
  )
}

/** Refuses the request when one of the configurations `asked` for is among the `unconstrained`. */
export function refuseUnconstrained(
  context: GrantContext,
  unconstrained: CredentialConfig[],
  asked: string[],
): void {
  for (const config of unconstrained.filter((c) => asked.includes(c.id))) {
    if (!context.dpopJkt && config.dpop === 'required')
      throw new ProtocolError(
        'invalid_dpop_proof',
        `'${config.id}' requires a DPoP proof at the token endpoint`,
      )
    if (!context.walletClient && config.walletAttestation === 'required')
      throw new ProtocolError(
        'invalid_client',
        `'${config.id}' requires wallet attestation client authentication`,
        {
          status: 401,
        },
      )
  }
}

/**
 * Configurations with `dpop: required` or `walletAttestation: required` (HAIP §4, §4.4.1), checked
 * before a code or refresh token is spent, so a refused wallet can retry with it. Only tenants that
 * require either pay the read of the configurations asked for.
 */
export async function requireSenderConstraints(
  context: GrantContext,
  configurationIds: () => Promise<string[]>,
): Promise<void> {
  const unconstrained = await unconstrainedConfigs(context)
  if (unconstrained.length > 0) refuseUnconstrained(context, unconstrained, await configurationIds())
}
