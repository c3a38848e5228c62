import {
  type CredentialConfig,
  formatSpec,
  ProtocolError,
  sdJwtStructureIssues,
} from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import { formatRuntime, type Signer } from '@credential-service/crypto'
import type { Database, IssuanceSessionRow } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { JWK } from 'jose'
import type { TenantScope } from '../tenant-scope'
import { warnUnlessLeafNamesIssuer } from './issuer-san-check'
import { createStatusListService } from './status-lists'

export interface IssueCredentialsOptions {
  session: IssuanceSessionRow
  offered: CredentialConfig
  /** Verified holder keys, one credential each; `[undefined]` for one credential without key binding. */
  holderKeys: (JWK | undefined)[]
  /** Claims validated against the configuration's fields. */
  claims: Record<string, unknown>
  /**
   * A transaction to allocate the status list entries in (they go if it does not commit), with the
   * signer resolved before it: PGlite runs one statement at a time, so a query outside the
   * transaction would wait for it.
   */
  tx?: { tx: Database; signer: Signer }
}

export interface IssuedCredentials {
  credentials: { credential: string }[]
  /** Each credential's status list entry, in the same order; empty without status management. */
  statuses: { idx: number; uri: string }[]
}

/**
 * Signs one credential per holder key with these claims (the batch of OpenID4VCI §8.3), each with
 * its own status list entry when the configuration manages status. Shared by the credential
 * endpoint and the deferred credential endpoint (§9), so both issue the same credentials.
 */
export const issueCredentials = traced('issuer sign credentials', issueCredentialsUntraced)

async function issueCredentialsUntraced(
  scope: TenantScope<ProtocolDeps>,
  options: IssueCredentialsOptions,
): Promise<IssuedCredentials> {
  const { deps, tenantId } = scope
  const { session, offered, holderKeys, claims, tx } = options
  // Checklist S-129: every source was checked when its claims came in, but an offer stored before
  // that check was not; nothing named like SD-JWT structure is ever signed.
  const structure = sdJwtStructureIssues(claims, 'claims')
  if (structure.length)
    throw new ProtocolError(
      'credential_request_denied',
      `claims of '${offered.id}' failed validation: ${structure.map((i) => `${i.path} ${i.message}`).join('; ')}`,
    )
  const issuer = scope.issuerUrl
  const signer = tx?.signer ?? (await deps.keys.signer(tenantId, offered.keyChainId))
  const now = deps.now()
  const expiresAt = new Date(now.getTime() + offered.lifetimeSeconds * 1000)
  // One status list entry per credential of the batch, each at its own random index.
  const statuses = offered.statusManagement
    ? await createStatusListService(scope).allocate(
        {
          keyChainId: offered.keyChainId,
          count: holderKeys.length,
          sessionId: session.id,
          credentialConfigurationId: offered.id,
          handle: session.statusHandle,
        },
        tx?.tx,
      )
    : []
  // The format's spec says what it needs; its runtime (packages/crypto/src/formats) signs.
  const format = formatSpec(offered.config.format)
  const issueOne = async (holderJwk: JWK | undefined, index: number): Promise<string> => {
    if (format.holderKeyRequired && !holderJwk)
      throw new ProtocolError('invalid_credential_request', `${format.format} credentials need a holder key`)
    if (format.namesIssuer)
      await warnUnlessLeafNamesIssuer(deps, { tenantId, keyChainId: offered.keyChainId, signer, issuer })
    return formatRuntime(offered.config.format).issue({
      signer,
      issuer,
      config: offered.config,
      fields: offered.fields,
      claims,
      holderJwk,
      issuedAt: now,
      expiresAt,
      status: statuses[index],
    })
  }
  const credentials = await Promise.all(
    holderKeys.map(async (key, index) => ({ credential: await issueOne(key, index) })),
  )
  return { credentials, statuses }
}
