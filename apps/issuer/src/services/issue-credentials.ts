import { type CredentialConfig, ProtocolError, sdJwtStructureIssues } from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import { issueMdoc, issueSdJwtVc, type Signer } from '@credential-service/crypto'
import type { Database, IssuanceSessionRow } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { base64url, type JWK } from 'jose'
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

/**
 * Signs one credential per holder key with these claims (the batch of OpenID4VCI §8.3), each with
 * its own status list entry when the configuration manages status. Shared by the credential
 * endpoint and the deferred credential endpoint (§9), so both issue the same credentials.
 */
export const issueCredentials = traced('issuer sign credentials', issueCredentialsUntraced)

async function issueCredentialsUntraced(
  scope: TenantScope<ProtocolDeps>,
  options: IssueCredentialsOptions,
): Promise<{ credential: string }[]> {
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
  const issueOne = async (holderJwk: JWK | undefined, index: number): Promise<string> => {
    const status = statuses[index]
    if (offered.config.format === 'mso_mdoc') {
      if (!holderJwk)
        throw new ProtocolError('invalid_credential_request', 'mso_mdoc credentials need a holder key')
      const mdoc = await issueMdoc({
        signer,
        docType: offered.config.docType as string,
        namespaces: claims as Record<string, Record<string, unknown>>,
        deviceJwk: holderJwk,
        signedAt: now,
        validFrom: now,
        validUntil: expiresAt,
        fullDates: new Set(
          offered.fields.filter((f) => f.type === 'date').map((f) => `${f.namespace}/${f.path[0]}`),
        ),
        status,
      })
      return base64url.encode(mdoc)
    }
    await warnUnlessLeafNamesIssuer(deps, { tenantId, keyChainId: offered.keyChainId, signer, issuer })
    return issueSdJwtVc({
      signer,
      issuer,
      vct: offered.config.vct as string,
      issuedAt: now,
      expiresAt,
      holderJwk,
      claims,
      disclosable: offered.fields.filter((f) => f.disclosable).map((f) => f.path),
      decoys: 2,
      status,
    })
  }
  return Promise.all(holderKeys.map(async (key, index) => ({ credential: await issueOne(key, index) })))
}
