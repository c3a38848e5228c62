import { certificateNamesIssuer, type Signer } from '@credential-service/crypto'
import type { ProtocolDeps } from '@credential-service/server-kit'

const MAX_CHAINS = 10_000
/** Per process logger: the leaf last checked for each `tenant/keyChain`. */
const checkedLeaves = new WeakMap<object, Map<string, string>>()

export interface IssuerSanCheckOptions {
  tenantId: string
  keyChainId: string
  signer: Signer
  /** The `iss` the credential carries: the tenant's credential issuer identifier. */
  issuer: string
}

/**
 * SD-JWT VC §3.5 (checklist S-131): verifiers refuse an SD-JWT VC whose `iss` no SAN of the `x5c`
 * leaf names. Leaves made before the management API added the SAN, and imported chains, may lack
 * it; the credential is still issued (refusing would stop issuance after an upgrade), and a
 * warning is logged once per leaf of each key chain, so the operator knows to rotate or re-certify.
 */
export async function warnUnlessLeafNamesIssuer(
  deps: Pick<ProtocolDeps, 'log'>,
  options: IssuerSanCheckOptions,
) {
  const leaf = options.signer.x5c[0]
  if (!leaf) return
  const checked = checkedLeaves.get(deps.log) ?? new Map<string, string>()
  checkedLeaves.set(deps.log, checked)
  const chain = `${options.tenantId}/${options.keyChainId}`
  if (checked.get(chain) === leaf) return
  if (checked.size >= MAX_CHAINS) checked.delete(checked.keys().next().value as string)
  checked.set(chain, leaf)
  if (await certificateNamesIssuer(leaf, options.issuer)) return
  deps.log.warn(
    { tenantId: options.tenantId, keyChainId: options.keyChainId, expectedSanUri: options.issuer },
    'the key chain’s leaf certificate has no SAN naming the credential issuer (SD-JWT VC §3.5): strict verifiers refuse its SD-JWT VCs; rotate the key chain or give it a certificate with this URI SAN',
  )
}
