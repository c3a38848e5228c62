import type { CredentialConfigData, ValidationIssue } from '@credential-service/core-domain'
import { isSelfSigned } from '@credential-service/crypto'

type HaipSettings = Pick<CredentialConfigData, 'dpop' | 'walletAttestation'>

/**
 * The settings that only HAIP wallets can meet: such wallets refuse an `x5c` whose leaf is
 * self-signed (HAIP §6.1.1, checklist F-02), so a configuration asking for them needs a key chain
 * whose leaf is issued by a CA.
 */
export function haipRequirements(config: HaipSettings): Array<'dpop' | 'walletAttestation'> {
  return (['dpop', 'walletAttestation'] as const).filter((field) => config[field] === 'required')
}

/** Whether the chain's active leaf certificate is self-signed (a chain without certificates is not). */
export const hasSelfSignedLeaf = (chain: { activeCertificates: string[] }) => {
  const [leaf] = chain.activeCertificates
  return leaf !== undefined && isSelfSigned(leaf)
}

/** One issue per HAIP setting of `config`, when its key chain's leaf is self-signed. */
export function selfSignedChainIssues(
  chain: { id: string; activeCertificates: string[] },
  config: HaipSettings,
  prefix: string,
): ValidationIssue[] {
  if (!hasSelfSignedLeaf(chain)) return []
  return haipRequirements(config).map((field) => ({
    path: `${prefix}.${field}`,
    message: `'required' is for HAIP wallets, which refuse the self-signed certificate of key chain '${chain.id}' (HAIP §6.1.1); use a key chain whose leaf a CA issued (source 'generate' with certificate mode 'internal-ca', the default)`,
  }))
}
