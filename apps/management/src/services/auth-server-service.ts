import {
  type AuthServer,
  type AuthServerData,
  checkOutboundUrl,
  type Principal,
  type ValidationIssue,
} from '@credential-service/core-domain'
import {
  createAuthServerRepository,
  createCredentialConfigRepository,
  type Database,
  type Executor,
} from '@credential-service/db-schema'
import { type ConfigServiceDeps, collection, crud, refuse } from './config-service'

/**
 * Columns of an external authorization server; the introspection secret is encrypted. Without
 * `clientSecret` a stored one is kept only for the same issuer and client id: the issuer sends it
 * to the server's introspection endpoint, so another server must never receive it.
 */
export function authServerColumns(
  deps: Pick<ConfigServiceDeps, 'cipher'>,
  tenantId: string,
  input: AuthServerData,
  previous: { issuer: string; clientId: string | null; clientSecretEncrypted: string | null } | undefined,
  pathPrefix: string,
): { columns: Record<string, unknown>; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = []
  let clientSecretEncrypted: string | null = null
  if (input.clientSecret) {
    clientSecretEncrypted = deps.cipher.encrypt(input.clientSecret, `auth-server:${tenantId}/${input.id}`)
  } else if (
    input.clientSecret === undefined &&
    previous?.clientSecretEncrypted &&
    input.tokenCheck !== 'jwt'
  ) {
    if (previous.issuer === input.issuer && previous.clientId === (input.clientId ?? null))
      clientSecretEncrypted = previous.clientSecretEncrypted
    else
      issues.push({
        path: `${pathPrefix}clientSecret`,
        message:
          'issuer or clientId changed: send the client secret for them (the stored secret is never sent to another server)',
      })
  }
  return {
    issues,
    columns: {
      id: input.id,
      description: input.description ?? null,
      issuer: input.issuer,
      tokenCheck: input.tokenCheck,
      clientId: input.clientId ?? null,
      clientSecretEncrypted,
      credentialConfigurationIds: input.credentialConfigurationIds,
      mapping: [...new Set(input.mapping)],
      claimsSource: input.claimsSource,
      singleUseTokens: input.singleUseTokens,
    },
  }
}

/**
 * What a server definition must hold in its tenant: known configurations, and an issuer no other
 * server of the tenant has (a token's `iss` names one server).
 */
export async function authServerIssues(
  db: Database,
  tenantId: string,
  input: AuthServerData,
  prefix: string,
  tx: Executor = db,
  importedConfigIds: ReadonlySet<string> = new Set(),
): Promise<ValidationIssue[]> {
  const issues: ValidationIssue[] = []
  const known = new Set((await createCredentialConfigRepository(db, tenantId).all(tx)).map((c) => c.id))
  input.credentialConfigurationIds.forEach((id, index) => {
    if (!known.has(id) && !importedConfigIds.has(id))
      issues.push({
        path: `${prefix}credentialConfigurationIds.${index}`,
        message: `no credential configuration '${id}' in this tenant`,
      })
  })
  const others = await createAuthServerRepository(db, tenantId).rows(tx)
  if (others.some((other) => other.id !== input.id && other.issuer === input.issuer))
    issues.push({
      path: `${prefix}issuer`,
      message: 'another authorization server of this tenant has this issuer',
    })
  return issues
}

/** External authorization servers (OpenID4VCI 1.0 §12.2.4): issuer under the outbound policy. */
export function createAuthServerService(deps: ConfigServiceDeps, tenantId: string, actor: Principal) {
  const repo = createAuthServerRepository(deps.db, tenantId)
  const base = collection<AuthServer>(deps, tenantId, actor, 'auth-server', repo)
  return crud(base, (input: AuthServerData, mode) =>
    base.save(input.id, mode, async (tx) => {
      const what = 'authorization server'
      refuse(checkOutboundUrl(input.issuer, deps.outbound, 'body.issuer'), what)
      refuse(await authServerIssues(deps.db, tenantId, input, 'body.', tx), what)
      const { columns, issues } = authServerColumns(
        deps,
        tenantId,
        input,
        await repo.row(input.id, tx),
        'body.',
      )
      refuse(issues, what)
      return columns
    }),
  )
}
