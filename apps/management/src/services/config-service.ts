import { randomBytes } from 'node:crypto'
import {
  type AttributeProvider,
  type AttributeProviderData,
  ConflictError,
  type CredentialConfig,
  type CredentialConfigBody,
  type CredentialConfigData,
  checkOutboundUrl,
  deriveClaimsJsonSchema,
  type LoginProvider,
  type LoginProviderData,
  NotFoundError,
  type OutboundUrlPolicy,
  type Page,
  type PageQuery,
  type PresentationConfig,
  type PresentationConfigData,
  type Principal,
  RuleViolationError,
  type ValidationIssue,
  type WalletProvider,
  type WalletProviderData,
  type WebhookEndpoint,
  type WebhookEndpointData,
} from '@credential-service/core-domain'
import { generateSecret, type JwkCipher } from '@credential-service/crypto'
import {
  type AuditEntry,
  createAttributeProviderRepository,
  createCredentialConfigRepository,
  createLoginProviderRepository,
  createPresentationConfigRepository,
  createTenantRepository,
  createWalletProviderRepository,
  createWebhookEndpointRepository,
  credentialConfigColumns,
  type Database,
  type Executor,
  foreignKeyViolation,
  type OwnedRepository,
  presentationConfigColumns,
  recordAudit,
} from '@credential-service/db-schema'
import { convertTrustAnchors, pemIssues } from './anchor-lists'
import {
  credentialConfigIssues,
  loginProviderIssues,
  missingTrustLists,
  presentationConfigIssues,
} from './config-validation'
import { type DefaultKeyChain, ensureDefaultKeyChain, withDefaultKeyChainTurn } from './default-key-chain'
import type { KeyChainServiceDeps } from './key-chain-service'

export interface ConfigServiceDeps {
  db: Database
  cipher: JwkCipher
  outbound: OutboundUrlPolicy
  /** Makes the tenant's default signing key chain for configurations that name none. */
  keyChains: KeyChainServiceDeps
}

type ResourceType = AuditEntry['resourceType']

export function refuse(issues: ValidationIssue[], what: string): void {
  if (issues.length)
    throw new RuleViolationError(`the ${what} breaks ${issues.length} rule(s); see errors`, issues)
}

/**
 * CRUD shared by the tenant's configuration collections: existence of the tenant, 409 on a taken
 * id, 404 on a missing one, 409 when a referenced row is deleted, an audit entry per change.
 */
export function collection<T>(
  deps: ConfigServiceDeps,
  tenantId: string,
  actor: Principal,
  resourceType: ResourceType,
  repo: OwnedRepository<T>,
) {
  const audit = (tx: Executor, action: AuditEntry['action'], id: string) =>
    recordAudit(tx, { tenantId, actorClientId: actor.clientId, action, resourceType, resourceId: id })
  const label = resourceType.replaceAll('-', ' ')

  return {
    async requireTenant() {
      if (!(await createTenantRepository(deps.db).get(tenantId))) throw new NotFoundError('tenant', tenantId)
    },
    async list(query: PageQuery): Promise<Page<T>> {
      await this.requireTenant()
      return repo.list(query)
    },
    async get(id: string): Promise<T> {
      const found = await repo.get(id)
      if (!found) throw new NotFoundError(label, id)
      return found
    },
    /** Validates inside the write transaction so references cannot vanish between check and write. */
    async save(
      id: string,
      mode: 'create' | 'replace',
      columns: (tx: Executor) => Promise<Record<string, unknown>>,
    ): Promise<T> {
      await this.requireTenant()
      return deps.db.transaction(async (tx) => {
        const exists = (await repo.row(id, tx)) !== undefined
        if (mode === 'create' && exists) throw new ConflictError(`${label} '${id}' already exists`)
        if (mode === 'replace' && !exists) throw new NotFoundError(label, id)
        const saved = await repo.upsert(await columns(tx), tx)
        await audit(tx, mode === 'create' ? 'create' : 'update', id)
        return saved
      })
    },
    async delete(id: string): Promise<void> {
      try {
        await deps.db.transaction(async (tx) => {
          if (!(await repo.delete(id, tx))) throw new NotFoundError(label, id)
          await audit(tx, 'delete', id)
        })
      } catch (error) {
        if (foreignKeyViolation(error) !== undefined) {
          throw new ConflictError(
            `${label} '${id}' is still referenced by a configuration; change or delete that first`,
          )
        }
        throw error
      }
    },
  }
}

/** The five verbs of a configuration collection whose rows are validated, then written. */
function validatedCrud<T, D extends { id: string }>(
  base: ReturnType<typeof collection<T>>,
  prepare: (input: D, tx: Executor) => Promise<Record<string, unknown>>,
) {
  return crud(base, (input: D, mode) => base.save(input.id, mode, (tx) => prepare(input, tx)))
}

/** The five operations of a collection route over `base`, with `save` for create and replace. */
export function crud<T, D extends { id: string }, S>(
  base: ReturnType<typeof collection<T>>,
  save: (input: D, mode: 'create' | 'replace') => Promise<S>,
) {
  return {
    list: base.list.bind(base),
    get: base.get.bind(base),
    delete: base.delete.bind(base),
    create: (input: D) => save(input, 'create'),
    replace: (id: string, input: D) => save({ ...input, id }, 'replace'),
  }
}

export function createCredentialConfigService(deps: ConfigServiceDeps, tenantId: string, actor: Principal) {
  const base = collection<CredentialConfig>(
    deps,
    tenantId,
    actor,
    'credential-config',
    createCredentialConfigRepository(deps.db, tenantId),
  )
  const repo = createCredentialConfigRepository(deps.db, tenantId)
  /** The key chain a body without one gets: on replace the stored one, else the tenant default. */
  const keyChainOf = async (
    input: CredentialConfigBody,
    tx: Executor,
  ): Promise<{ id: string; defaultKeyChain?: DefaultKeyChain }> => {
    if (input.keyChainId !== undefined) return { id: input.keyChainId }
    const stored = await repo.row(input.id, tx)
    if (stored) return { id: stored.keyChainId }
    const defaultKeyChain = await ensureDefaultKeyChain(deps.keyChains, tenantId, actor.clientId, tx)
    return { id: defaultKeyChain.id, defaultKeyChain }
  }
  const save = (input: CredentialConfigBody, mode: 'create' | 'replace') =>
    base.save(input.id, mode, async (tx) => {
      const { id: keyChainId, defaultKeyChain } = await keyChainOf(input, tx)
      const data: CredentialConfigData = { ...input, keyChainId }
      refuse(
        await credentialConfigIssues(deps.db, tenantId, data, { tx, defaultKeyChain }),
        'credential configuration',
      )
      return credentialConfigColumns(data)
    })
  return {
    ...crud(base, (input: CredentialConfigBody, mode) =>
      input.keyChainId === undefined
        ? withDefaultKeyChainTurn(deps.keyChains, tenantId, () => save(input, mode))
        : save(input, mode),
    ),
    /** The JSON Schema of the configuration's claims, derived from `fields` (never stored). */
    async schema(id: string) {
      return deriveClaimsJsonSchema(await base.get(id))
    },
  }
}

export function createPresentationConfigService(deps: ConfigServiceDeps, tenantId: string, actor: Principal) {
  const base = collection<PresentationConfig>(
    deps,
    tenantId,
    actor,
    'presentation-config',
    createPresentationConfigRepository(deps.db, tenantId),
  )
  return validatedCrud(base, async (input: PresentationConfigData, tx) => {
    const what = 'presentation configuration'
    refuse(pemIssues(input.trustAnchors ?? [], 'body.trustAnchors'), what)
    const converted = await convertTrustAnchors(deps.db, tenantId, actor.clientId, input, 'body', tx)
    refuse(converted.issues, what)
    const data: PresentationConfigData = converted.data
    refuse(
      await presentationConfigIssues(deps.db, tenantId, data, {
        tx,
        outbound: deps.outbound,
        verifier: deps.keyChains,
      }),
      what,
    )
    return presentationConfigColumns(data)
  })
}

type EndpointData = AttributeProviderData | WebhookEndpointData

/**
 * Auth columns of an endpoint. The API key value and the HMAC secret are encrypted at rest; a new
 * HMAC secret is made when auth turns to hmac and returned once as `signingSecret`.
 */
export async function endpointColumns(
  deps: ConfigServiceDeps,
  context: string,
  input: EndpointData,
  previous: { authType: string; authSecret: string | null } | undefined,
): Promise<{ columns: Record<string, unknown>; signingSecret?: string }> {
  const auth = input.auth
  const common = { id: input.id, description: input.description ?? null, url: input.url }
  if (auth.type === 'api-key') {
    return {
      columns: {
        ...common,
        authType: 'api-key',
        authHeader: auth.headerName,
        authSecret: deps.cipher.encrypt(auth.value, context),
      },
    }
  }
  if (auth.type === 'hmac') {
    if (auth.secret) {
      return {
        columns: {
          ...common,
          authType: 'hmac',
          authHeader: null,
          authSecret: deps.cipher.encrypt(auth.secret, context),
        },
      }
    }
    if (previous?.authType === 'hmac' && previous.authSecret) {
      return { columns: { ...common, authType: 'hmac', authHeader: null, authSecret: previous.authSecret } }
    }
    // Standard Webhooks libraries take a `whsec_<base64>` secret and sign with its decoded bytes.
    const standard = 'signatureHeaders' in input && input.signatureHeaders !== 'x-signature'
    const signingSecret = standard ? `whsec_${randomBytes(32).toString('base64')}` : generateSecret()
    return {
      columns: {
        ...common,
        authType: 'hmac',
        authHeader: null,
        authSecret: deps.cipher.encrypt(signingSecret, context),
      },
      signingSecret,
    }
  }
  return { columns: { ...common, authType: 'none', authHeader: null, authSecret: null } }
}

function endpointService<T, D extends EndpointData>(
  deps: ConfigServiceDeps,
  tenantId: string,
  actor: Principal,
  resourceType: 'attribute-provider' | 'webhook-endpoint',
  repo: OwnedRepository<T>,
  extra: (input: D) => Record<string, unknown>,
) {
  const base = collection<T>(deps, tenantId, actor, resourceType, repo)
  const save = async (input: D, mode: 'create' | 'replace'): Promise<T & { signingSecret?: string }> => {
    refuse(checkOutboundUrl(input.url, deps.outbound), resourceType.replace('-', ' '))
    let signingSecret: string | undefined
    const saved = await base.save(input.id, mode, async (tx) => {
      const previous = (await repo.row(input.id, tx)) as
        | { authType: string; authSecret: string | null }
        | undefined
      const result = await endpointColumns(deps, `${resourceType}:${tenantId}/${input.id}`, input, previous)
      signingSecret = result.signingSecret
      return { ...result.columns, ...extra(input) }
    })
    return (signingSecret ? { ...saved, signingSecret } : saved) as T & { signingSecret?: string }
  }
  return crud(base, save)
}

export const createAttributeProviderService = (deps: ConfigServiceDeps, tenantId: string, actor: Principal) =>
  endpointService<AttributeProvider, AttributeProviderData>(
    deps,
    tenantId,
    actor,
    'attribute-provider',
    createAttributeProviderRepository(deps.db, tenantId),
    (input) => ({ timeoutMs: input.timeoutMs }),
  )

export const createWebhookEndpointService = (deps: ConfigServiceDeps, tenantId: string, actor: Principal) =>
  endpointService<WebhookEndpoint, WebhookEndpointData>(
    deps,
    tenantId,
    actor,
    'webhook-endpoint',
    createWebhookEndpointRepository(deps.db, tenantId),
    (input) => ({ events: input.events ?? null, signatureHeaders: input.signatureHeaders }),
  )

/**
 * Login providers (authorization code flow): the issuer URL passes the outbound policy, the client
 * secret is encrypted at rest (see `loginProviderColumns` for when a stored one is kept).
 */
export function createLoginProviderService(deps: ConfigServiceDeps, tenantId: string, actor: Principal) {
  const repo = createLoginProviderRepository(deps.db, tenantId)
  const base = collection<LoginProvider>(deps, tenantId, actor, 'login-provider', repo)
  return validatedCrud(base, async (input: LoginProviderData, tx) => {
    if (input.issuer) refuse(checkOutboundUrl(input.issuer, deps.outbound, 'body.issuer'), 'login provider')
    refuse(await loginProviderIssues(deps.db, tenantId, input, 'body', tx), 'login provider')
    const previous = await repo.row(input.id, tx)
    const { columns, issues } = loginProviderColumns(deps, tenantId, input, previous, 'body.')
    refuse(issues, 'login provider')
    return columns
  })
}

/**
 * Columns of a login provider; the secret is encrypted. `clientSecret: null` removes a stored one.
 * Without `clientSecret` the stored one is kept only for the same issuer and client id: the
 * issuer sends it as HTTP Basic to the provider's token endpoint, so a changed issuer must not
 * receive the old provider's secret.
 */
export function loginProviderColumns(
  deps: Pick<ConfigServiceDeps, 'cipher'>,
  tenantId: string,
  input: LoginProviderData,
  previous:
    | { issuer: string | null; clientId: string | null; clientSecretEncrypted: string | null }
    | undefined,
  pathPrefix: string,
): { columns: Record<string, unknown>; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = []
  let clientSecretEncrypted: string | null = null
  if (input.clientSecret) {
    clientSecretEncrypted = deps.cipher.encrypt(input.clientSecret, `login-provider:${tenantId}/${input.id}`)
  } else if (input.clientSecret === undefined && previous?.clientSecretEncrypted) {
    if (previous.issuer === input.issuer && previous.clientId === input.clientId)
      clientSecretEncrypted = previous.clientSecretEncrypted
    else
      issues.push({
        path: `${pathPrefix}clientSecret`,
        message:
          'issuer or clientId changed: send the client secret for them, or null for a public client (the stored secret is never sent to another provider)',
      })
  }
  return {
    issues,
    columns: {
      id: input.id,
      description: input.description ?? null,
      kind: input.kind,
      issuer: input.issuer ?? null,
      clientId: input.clientId ?? null,
      scopes: input.scopes,
      presentationConfigId: input.presentationConfigId ?? null,
      clientSecretEncrypted,
    },
  }
}

/**
 * Trusted wallet providers (wallet and key attestations chain to their trust lists): deprecated
 * `trustAnchors` become a pem trust list first (convertTrustAnchors); the trust lists named must
 * exist (locked FOR SHARE until the save commits, so none is deleted meanwhile).
 */
export function createWalletProviderService(deps: ConfigServiceDeps, tenantId: string, actor: Principal) {
  const base = collection<WalletProvider>(
    deps,
    tenantId,
    actor,
    'wallet-provider',
    createWalletProviderRepository(deps.db, tenantId),
  )
  return validatedCrud(base, async (input: WalletProviderData, tx) => {
    refuse(walletProviderIssues(input), 'wallet provider')
    const converted = await convertTrustAnchors(deps.db, tenantId, actor.clientId, input, 'body', tx)
    refuse(
      [
        ...converted.issues,
        ...(await missingTrustLists(deps.db, tenantId, converted.data.trustListIds, 'body', tx)),
      ],
      'wallet provider',
    )
    return walletProviderColumns(converted.data)
  })
}

/**
 * Trust anchors that are not PEM X.509 certificates, each named by its index; a provider with
 * neither anchors nor trust lists could never be trusted.
 */
export function walletProviderIssues(input: WalletProviderData): ValidationIssue[] {
  const issues = pemIssues(input.trustAnchors ?? [], 'body.trustAnchors')
  if (!input.trustAnchors?.length && !input.trustListIds?.length)
    issues.push({
      path: 'body.trustListIds',
      message: 'a wallet provider needs a trust list in trustListIds (or trustAnchors, converted into one)',
    })
  return issues
}

/** Columns of a provider whose anchors were converted (the column is kept empty until dropped). */
export const walletProviderColumns = (input: Omit<WalletProviderData, 'trustAnchors'>) => ({
  id: input.id,
  name: input.name,
  description: input.description ?? null,
  trustAnchors: [],
  trustListIds: input.trustListIds?.length ? input.trustListIds : null,
})
