import {
  InvalidInputError,
  type PresentationConfigData,
  type Principal,
} from '@credential-service/core-domain'
import { hashSecret, isLegacySecretHash, type SecretVerifier } from '@credential-service/crypto'
import {
  createAttributeProviderRepository,
  createAuthServerRepository,
  createClientRepository,
  createCredentialConfigRepository,
  createFederationRepository,
  createKeyChainRepository,
  createLoginProviderRepository,
  createPresentationConfigRepository,
  createTenantRepository,
  createTrustListRepository,
  createWalletProviderRepository,
  createWebhookEndpointRepository,
  credentialConfigColumns,
  type Database,
  type Executor,
  lockTenant,
  presentationConfigColumns,
  recordAudit,
  type TrustListRow,
  trustListColumns,
} from '@credential-service/db-schema'
import { convertTrustAnchors } from '../services/anchor-lists'
import { authServerColumns, authServerIssues } from '../services/auth-server-service'
import {
  type ConfigServiceDeps,
  endpointColumns,
  loginProviderColumns,
  walletProviderColumns,
} from '../services/config-service'
import {
  credentialConfigIssues,
  loginProviderIssues,
  missingTrustLists,
  presentationConfigIssues,
} from '../services/config-validation'
import { ensureDefaultKeyChain } from '../services/default-key-chain'
import { membershipColumns, storedMembershipIssues } from '../services/federation-service'
import { type KeyChainServiceDeps, keyChainColumns } from '../services/key-chain-service'
import { refuseFetchedListPastBound } from '../services/trust-list-service'
import type { ImportIssue } from './read-config-dir'
import type { TenantPlan } from './validate-tenant'

export interface ApplyDeps {
  keyChains: KeyChainServiceDeps
  configs: ConfigServiceDeps
  verifySecret: SecretVerifier
}

/** Issues met while applying: the tenant's transaction is rolled back. */
export class ImportRejected extends Error {
  constructor(readonly issues: ImportIssue[]) {
    super(`${issues.length} import issue(s)`)
  }
}

export interface AppliedCounts {
  keyChainsCreated: number
  attributeProviders: number
  webhookEndpoints: number
  loginProviders: number
  trustLists: number
  walletProviders: number
  credentials: number
  presentations: number
  authServers: number
  /** 1 when `federation/membership.json` made or replaced the membership. */
  federation: number
  clients: number
}

const IMPORTER: Principal = { clientId: 'system:config-import', tenantId: undefined, roles: [] }

/**
 * Applies a validated tenant folder in one transaction, under a per-tenant advisory lock so pods
 * starting together import one after the other. Idempotent: key chains are created once (their
 * keys are never regenerated); configurations, endpoints and clients are brought to the files'
 * state. Any issue rolls the whole tenant back.
 */
export async function applyTenantPlan(deps: ApplyDeps, plan: TenantPlan): Promise<AppliedCounts> {
  const db: Database = deps.configs.db
  const tenantId = plan.tenant
  const now = deps.keyChains.now()
  return db.transaction(async (tx) => {
    await lockTenant(tx, tenantId)
    await upsertTenant(db, tx, plan)

    const keyChains = createKeyChainRepository(db, tenantId)
    let keyChainsCreated = 0
    for (const { data } of plan.keyChains) {
      if (await keyChains.get(data.id, tx)) continue
      const columns = await keyChainColumns(deps.keyChains, tenantId, data.id, data, now).catch(
        (error: Error) => {
          const file = plan.keyChains.find((k) => k.data.id === data.id)?.file ?? ''
          // A refusal of the API names `body.<field>`: the file's field is the same one.
          const issues =
            error instanceof InvalidInputError && error.issues.length
              ? error.issues.map((issue) => ({
                  file,
                  path: issue.path.replace(/^body\./, ''),
                  message: error.message,
                }))
              : [{ file, path: '', message: error.message }]
          throw new ImportRejected(issues)
        },
      )
      await keyChains.insert(columns, tx)
      keyChainsCreated++
    }

    for (const [items, repo, extra, kind] of [
      [
        plan.attributeProviders,
        createAttributeProviderRepository(db, tenantId),
        (d: { timeoutMs?: number }) => ({ timeoutMs: d.timeoutMs }),
        'attribute-provider',
      ],
      [
        plan.webhookEndpoints,
        createWebhookEndpointRepository(db, tenantId),
        (d: { events?: string[]; signatureHeaders?: string }) => ({
          events: d.events ?? null,
          signatureHeaders: d.signatureHeaders ?? 'x-signature',
        }),
        'webhook-endpoint',
      ],
    ] as const) {
      for (const { data } of items) {
        const previous = (await repo.row(data.id, tx)) as
          | { authType: string; authSecret: string | null }
          | undefined
        const { columns } = await endpointColumns(
          deps.configs,
          `${kind}:${tenantId}/${data.id}`,
          data,
          previous,
        )
        await repo.upsert({ ...columns, ...extra(data as never) }, tx)
      }
    }

    const rejected: ImportIssue[] = []
    // Trust lists before what names them: wallet providers and presentation configurations.
    const trustLists = createTrustListRepository(db, tenantId)
    for (const { file, data } of plan.trustLists) {
      await refuseFetchedListPastBound(trustLists, tenantId, data, tx).catch((error: Error) => {
        throw new ImportRejected([{ file, path: '', message: error.message }])
      })
      const previous = (await trustLists.row(data.id, tx)) as TrustListRow | undefined
      await trustLists.upsert(trustListColumns(data, previous, now), tx)
    }
    const walletProviders = createWalletProviderRepository(db, tenantId)
    for (const { file, data } of plan.walletProviders) {
      const converted = await convertTrustAnchors(db, tenantId, IMPORTER.clientId, data, '', tx)
      const issues = [
        ...converted.issues,
        ...(await missingTrustLists(db, tenantId, converted.data.trustListIds, '', tx)),
      ]
      rejected.push(
        ...issues.map((issue) => ({ file, path: issue.path.replace(/^\./, ''), message: issue.message })),
      )
      if (!issues.length) await walletProviders.upsert(walletProviderColumns(converted.data), tx)
    }

    if (plan.settings?.defaultKeyChainId !== undefined) {
      const id = plan.settings.defaultKeyChainId
      if (!(await keyChains.setDefault(id, tx)))
        rejected.push({
          file: `${tenantId}/tenant.json`,
          path: 'defaultKeyChainId',
          message: `no key chain '${id}' in this tenant (nor in key-chains/)`,
        })
    }
    // Presentation configurations before the login providers that name them, those before credentials.
    // Credentials in this import are checked against their provider when they are applied.
    const importedIds = new Set(plan.credentials.map((c) => c.data.id))
    const presentations = createPresentationConfigRepository(db, tenantId)
    for (const { file, data: body } of plan.presentations) {
      // Issue 25: deprecated trustAnchors become a pem trust list, as through the API.
      const converted = await convertTrustAnchors(db, tenantId, IMPORTER.clientId, body, '', tx)
      const data: PresentationConfigData = converted.data
      const issues = converted.issues.length
        ? converted.issues
        : await presentationConfigIssues(db, tenantId, data, {
            tx,
            prefix: '',
            outbound: deps.configs.outbound,
            verifier: deps.keyChains,
            replacedCredentialIds: importedIds,
          })
      rejected.push(
        ...issues.map((issue) => ({ file, path: issue.path.replace(/^\./, ''), message: issue.message })),
      )
      if (!issues.length) await presentations.upsert(presentationConfigColumns(data), tx)
    }
    const loginProviders = createLoginProviderRepository(db, tenantId)
    for (const { file, data } of plan.loginProviders) {
      const previous = await loginProviders.row(data.id, tx)
      const { columns, issues } = loginProviderColumns(deps.configs, tenantId, data, previous, '')
      issues.push(
        ...(await loginProviderIssues(db, tenantId, data, '', tx, importedIds)).map((issue) => ({
          ...issue,
          path: issue.path.replace(/^\./, ''),
        })),
      )
      rejected.push(...issues.map((issue) => ({ file, ...issue })))
      if (!issues.length) await loginProviders.upsert(columns, tx)
    }
    const credentials = createCredentialConfigRepository(db, tenantId)
    for (const { file, data: body } of plan.credentials) {
      // Like the API: a file without keyChainId keeps the stored one, else gets the default.
      const named = body.keyChainId ?? (await credentials.row(body.id, tx))?.keyChainId
      const defaultKeyChain = named
        ? undefined
        : await ensureDefaultKeyChain(deps.keyChains, tenantId, IMPORTER.clientId, tx)
      const data = { ...body, keyChainId: defaultKeyChain?.id ?? (named as string) }
      const issues = await credentialConfigIssues(db, tenantId, data, { tx, prefix: '', defaultKeyChain })
      rejected.push(
        ...issues.map((issue) => ({ file, path: issue.path.replace(/^\./, ''), message: issue.message })),
      )
      if (!issues.length) await credentials.upsert(credentialConfigColumns(data), tx)
    }
    // After the credentials they may authorise.
    const authServers = createAuthServerRepository(db, tenantId)
    for (const { file, data } of plan.authServers) {
      const { columns, issues } = authServerColumns(
        deps.configs,
        tenantId,
        data,
        await authServers.row(data.id, tx),
        '',
      )
      issues.push(...(await authServerIssues(db, tenantId, data, '', tx)))
      rejected.push(...issues.map((issue) => ({ file, ...issue })))
      if (!issues.length) await authServers.upsert(columns, tx)
    }
    // After the configurations: the membership's key chain must sign none of them.
    if (plan.federation) {
      const { file, data } = plan.federation
      const issues = await storedMembershipIssues(
        { db, publicUrl: deps.keyChains.publicUrl },
        tenantId,
        data,
        {
          prefix: '',
          tx,
        },
      )
      rejected.push(
        ...issues.map((issue) => ({ file, path: issue.path.replace(/^\./, ''), message: issue.message })),
      )
      if (!issues.length) await createFederationRepository(db, tenantId).put(membershipColumns(data), tx)
    }
    rejected.push(...(await applyClients(deps, db, tx, plan)))
    // By file, whatever order they were applied in (dependencies decide that).
    rejected.sort((a, b) => a.file.localeCompare(b.file))
    if (rejected.length) throw new ImportRejected(rejected)

    await recordAudit(tx, {
      tenantId,
      actorClientId: IMPORTER.clientId,
      action: 'update',
      resourceType: 'tenant',
      resourceId: tenantId,
      detail: { configImport: true, files: countFiles(plan) },
    })
    return {
      keyChainsCreated,
      attributeProviders: plan.attributeProviders.length,
      webhookEndpoints: plan.webhookEndpoints.length,
      loginProviders: plan.loginProviders.length,
      trustLists: plan.trustLists.length,
      walletProviders: plan.walletProviders.length,
      credentials: plan.credentials.length,
      presentations: plan.presentations.length,
      authServers: plan.authServers.length,
      federation: plan.federation ? 1 : 0,
      clients: plan.clients.length,
    }
  })
}

/** Creates the tenant, or applies `tenant.json` to it (absent keys leave a setting as it is). */
async function upsertTenant(db: Database, tx: Executor, plan: TenantPlan) {
  const tenants = createTenantRepository(db)
  const { name, description, defaultKeyChainId: _set, ...settings } = plan.settings ?? {}
  if (!(await tenants.get(plan.tenant, tx))) {
    await tenants.create(
      { id: plan.tenant, name: name ?? plan.tenant, description: description ?? undefined, ...settings },
      tx,
    )
  } else if (plan.settings) {
    await tenants.update(plan.tenant, { name, description, ...settings }, tx)
  }
}

/** Clients are created with the file's secret, or brought to its roles, lists and secret. */
async function applyClients(
  deps: ApplyDeps,
  db: Database,
  tx: Executor,
  plan: TenantPlan,
): Promise<ImportIssue[]> {
  const issues: ImportIssue[] = []
  const clients = createClientRepository(db, plan.tenant)
  for (const { file, data } of plan.clients) {
    const existing = await clients.get(data.clientId, tx)
    const fields = {
      description: data.description,
      roles: data.roles,
      allowedPresentationConfigs: data.allowedPresentationConfigs ?? null,
      allowedIssuanceConfigs: data.allowedIssuanceConfigs ?? null,
    }
    if (!existing) {
      const created = await clients.create(
        { clientId: data.clientId, secretHash: await hashSecret(data.clientSecret), ...fields },
        tx,
      )
      if (!created)
        issues.push({
          file,
          path: 'clientId',
          message: `client id '${data.clientId}' is taken by another tenant or an operator`,
        })
      continue
    }
    await clients.update(data.clientId, fields, tx)
    const stored = await clients.secretHash(data.clientId, tx)
    // A hash from before pre-hashing checks only 72 bytes of the file's secret: write a new one.
    if (stored && (isLegacySecretHash(stored) || !(await deps.verifySecret(data.clientSecret, stored)))) {
      await clients.replaceSecret(data.clientId, await hashSecret(data.clientSecret), tx)
    }
  }
  return issues
}

function countFiles(plan: TenantPlan) {
  return (
    plan.keyChains.length +
    plan.attributeProviders.length +
    plan.webhookEndpoints.length +
    plan.loginProviders.length +
    plan.trustLists.length +
    plan.walletProviders.length +
    plan.credentials.length +
    plan.presentations.length +
    plan.authServers.length +
    (plan.federation ? 1 : 0) +
    plan.clients.length
  )
}
