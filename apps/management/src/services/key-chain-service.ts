import {
  ConflictError,
  DomainError,
  InvalidInputError,
  type KeyChain,
  type KeyChainCreate,
  type KeyChainRotate,
  type KeyChainUpdate,
  NotFoundError,
  newId,
  type Page,
  type PageQuery,
  type Principal,
  RuleViolationError,
  type SigningAlgorithm,
} from '@credential-service/core-domain'
import { generateKeyPair, jwkContext, thumbprint } from '@credential-service/crypto'
import {
  createCredentialConfigRepository,
  createKeyChainRepository,
  createTenantRepository,
  type Database,
  type Executor,
  foreignKeyViolation,
  forgetExpiredPreviousKeys,
  type KeyChainPatch,
  type KeyChainRow,
  lockDueKeyChains,
  type NewKeyChainRow,
  recordAudit,
  tenantChanged,
  toKeyChain,
} from '@credential-service/db-schema'
import type { KeyRuntime } from '@credential-service/server-kit'
import type { JWK } from 'jose'
import {
  certifyLocalKey,
  createMaterial,
  crlUriOf,
  describeExternalKey,
  type ExternalProvider,
  externalActiveColumns,
  generateExternalKey,
  localActiveColumns,
  type MaterialContext,
  retireActive,
  verifiedChain,
} from './key-chain-material'
import { haipRequirements, hasSelfSignedLeaf } from './self-signed-chain'

const DAY = 86_400_000

export interface KeyChainServiceDeps {
  db: Database
  keys: KeyRuntime
  /** PUBLIC_URL: its host is the default SAN dNSName of generated certificates, and a tenant's
   * issuer URL under it their issuer alternative name. */
  publicUrl: string
  now: () => Date
}

/** The tenant's credential issuer identifier (DESIGN.md): the issuer alternative name of its certificates. */
export const issuerUriOf = (deps: Pick<KeyChainServiceDeps, 'publicUrl'>, tenantId: string) =>
  `${deps.publicUrl}/issuers/${tenantId}`

const addDays = (date: Date, days: number) => new Date(date.getTime() + days * DAY)

/** Whether the service makes this chain's keys itself: in the database, or on a token with the chain's CA. */
const generatedHere = (row: Pick<KeyChainRow, 'kmsProvider' | 'rootJwk'>) =>
  row.kmsProvider === 'db' || Boolean(row.rootJwk)

/** Rotation policy columns; automatic rotation is for keys the service can generate itself. */
export function policyColumns(
  row: Pick<KeyChainRow, 'kmsProvider' | 'rootJwk'>,
  policy: KeyChain['rotationPolicy'] | undefined,
  from: Date,
) {
  if (!policy) return {}
  if (policy.enabled && !generatedHere(row)) {
    const message =
      'automatic rotation needs a key the service generates (`source: generate`); rotate registered external keys in their provider'
    throw new InvalidInputError(message, [{ path: 'body.rotationPolicy.enabled', message }])
  }
  return {
    rotationEnabled: policy.enabled,
    rotationIntervalDays: policy.intervalDays,
    rotationGraceDays: policy.gracePeriodDays,
    nextRotationAt: policy.enabled ? addDays(from, policy.intervalDays) : null,
  }
}

/** Decrypts the root key of an internal CA, to certify a rotated leaf. */
function rootOf(
  deps: KeyChainServiceDeps,
  row: KeyChainRow,
): { privateJwk: JWK; certificate: string } | undefined {
  if (!row.rootJwk || !row.rootCertificate) return undefined
  return {
    privateJwk: deps.keys.cipher.decrypt(row.rootJwk, jwkContext(row.tenantId, row.id)),
    certificate: row.rootCertificate,
  }
}

/**
 * Replaces the active key of a locked row and keeps the old one as `previous` through the grace
 * period. `db` chains get a fresh key (certified like the old one); external chains take the
 * provider's current key for `externalKeyId`.
 */
async function rotateRow(
  deps: KeyChainServiceDeps,
  tx: Executor,
  row: KeyChainRow,
  input: KeyChainRotate,
): Promise<KeyChainRow> {
  const now = deps.now()
  const context: MaterialContext = {
    tenantId: row.tenantId,
    keyChainId: row.id,
    cipher: deps.keys.cipher,
    providers: deps.keys.providers,
    now,
  }
  let active: KeyChainPatch
  const root = rootOf(deps, row)
  const plan = {
    mode: root ? ('internal-ca' as const) : ('self-signed' as const),
    subject: row.subject,
    validityDays: Math.max(365, row.rotationIntervalDays + row.rotationGraceDays),
    dnsNames: row.dnsNames,
    issuerUri: issuerUriOf(deps, row.tenantId),
    crlUri: crlUriOf(issuerUriOf(deps, row.tenantId), row.id),
  }
  if (row.kmsProvider === 'db') {
    if (input.externalKeyId !== undefined) {
      const message = 'externalKeyId applies to key chains held by an external provider only'
      throw new InvalidInputError(message, [{ path: 'body.externalKeyId', message }])
    }
    const pair = await generateKeyPair(row.algorithm as SigningAlgorithm)
    const certificate = await certifyLocalKey(pair, plan, root, now)
    active = localActiveColumns(context, pair, [certificate], plan.mode)
  } else if (root && input.externalKeyId === undefined) {
    // A key chain generated in its provider (a PKCS#11 token): a new key there, certified by the chain's CA.
    const key = await generateExternalKey(
      context,
      row.kmsProvider as ExternalProvider,
      row.algorithm as SigningAlgorithm,
    )
    const certificate = await certifyLocalKey(key, plan, root, now)
    active = await externalActiveColumns(context, key, [certificate], plan.mode)
  } else {
    // Without a new id: the key's current version, where the provider pins versions (Azure).
    const stored = row.externalKeyId as string
    const requested =
      input.externalKeyId ??
      deps.keys.providers[row.kmsProvider as ExternalProvider]?.unpinned?.(stored) ??
      stored
    const key = await describeExternalKey(context, row.kmsProvider as ExternalProvider, requested)
    const externalKeyId = key.externalKeyId ?? requested
    if ((await thumbprint(key.publicJwk)) === row.activeKid) {
      throw new ConflictError(
        `key chain '${row.id}': the provider still holds the same key; rotate it there first or name a new externalKeyId`,
      )
    }
    active = await externalActiveColumns(context, { ...key, externalKeyId }, [], 'none')
  }
  const repo = createKeyChainRepository(deps.db, row.tenantId)
  const updated = await repo.update(
    row.id,
    {
      ...retireActive(row, addDays(now, row.rotationGraceDays)),
      ...active,
      rotatedAt: now,
      nextRotationAt: row.rotationEnabled ? addDays(now, row.rotationIntervalDays) : null,
    },
    tx,
  )
  return updated as KeyChainRow
}

/**
 * The reverse of the configuration rule (selfSignedChainIssues): a chain that configurations with
 * `dpop` or `walletAttestation` `required` sign with may not switch to a self-signed certificate.
 */
async function refuseSelfSignedUnderHaip(
  deps: KeyChainServiceDeps,
  tenantId: string,
  id: string,
  certificates: string[],
  tx: Executor,
): Promise<void> {
  if (!hasSelfSignedLeaf({ activeCertificates: certificates })) return
  const users = (await createCredentialConfigRepository(deps.db, tenantId).all(tx)).filter(
    (config) => config.keyChainId === id && haipRequirements(config).length > 0,
  )
  if (!users.length) return
  const message = `a self-signed certificate is refused by HAIP wallets, which credential configuration(s) ${users
    .map((config) => `'${config.id}'`)
    .join(', ')} require (dpop or walletAttestation 'required')`
  throw new RuleViolationError(`key chain '${id}': ${message}`, [{ path: 'body.certificateChain', message }])
}

/**
 * The row of a new key chain: its key generated, imported or described by its provider, its
 * certificate made (subject `CN=<tenant> <id>`, SAN the host of PUBLIC_URL by default) and its
 * rotation policy. Nothing is written.
 */
export async function keyChainColumns(
  deps: KeyChainServiceDeps,
  tenantId: string,
  id: string,
  input: KeyChainCreate,
  now: Date,
): Promise<Omit<NewKeyChainRow, 'tenantId'>> {
  const context: MaterialContext = {
    tenantId,
    keyChainId: id,
    cipher: deps.keys.cipher,
    providers: deps.keys.providers,
    now,
  }
  const material = await createMaterial(context, input, {
    subject: `CN=${tenantId} ${id}`,
    dnsNames: [new URL(deps.publicUrl).hostname],
    issuerUri: issuerUriOf(deps, tenantId),
  })
  return {
    id,
    description: input.description ?? null,
    ...material,
    ...policyColumns(
      { kmsProvider: material.kmsProvider ?? 'db', rootJwk: material.rootJwk ?? null },
      input.rotationPolicy,
      now,
    ),
  }
}

/** Key chains of one tenant (spec §2.4): public material out, private material never. */
export function createKeyChainService(deps: KeyChainServiceDeps, tenantId: string, actor: Principal) {
  const repo = createKeyChainRepository(deps.db, tenantId)
  const audit = (
    action: 'create' | 'update' | 'delete' | 'rotate-secret',
    id: string,
    detail?: Record<string, unknown>,
  ) => ({
    tenantId,
    actorClientId: actor.clientId,
    action,
    resourceType: 'key-chain' as const,
    resourceId: id,
    ...(detail ? { detail } : {}),
  })

  async function requireTenant(): Promise<void> {
    if (!(await createTenantRepository(deps.db).get(tenantId))) throw new NotFoundError('tenant', tenantId)
  }

  async function found(id: string): Promise<KeyChainRow> {
    const row = await repo.get(id)
    if (!row) throw new NotFoundError('key chain', id)
    return row
  }

  const service = {
    async list(query: PageQuery): Promise<Page<KeyChain>> {
      await requireTenant()
      return repo.list(query)
    },

    get: async (id: string): Promise<KeyChain> => toKeyChain(await found(id), deps.now()),

    async create(input: KeyChainCreate): Promise<KeyChain> {
      await requireTenant()
      const id = input.id ?? newId('kc')
      const now = deps.now()
      if (await repo.get(id)) throw new ConflictError(`key chain '${id}' already exists`)
      // Provider calls and key generation happen before the write: a failure leaves nothing behind.
      const columns = await keyChainColumns(deps, tenantId, id, input, now)
      return deps.db.transaction(async (tx) => {
        const row = await repo.insert(columns, tx)
        if (!row) throw new ConflictError(`key chain '${id}' already exists`)
        await recordAudit(
          tx,
          audit('create', id, { source: input.source, kmsProvider: row.kmsProvider, kid: row.activeKid }),
        )
        return toKeyChain(row, now)
      })
    },

    async update(id: string, patch: KeyChainUpdate): Promise<KeyChain> {
      return deps.db.transaction(async (tx) => {
        const row = await repo.lock(id, tx)
        if (!row) throw new NotFoundError('key chain', id)
        const changes: KeyChainPatch = {
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          ...policyColumns(row, patch.rotationPolicy, row.rotatedAt ?? row.createdAt),
        }
        if (patch.certificateChain) {
          changes.activeCertificates = await verifiedChain(
            patch.certificateChain,
            row.activePublicJwk,
            'body.certificateChain',
            deps.now(),
          )
          changes.certificateMode = 'provided'
          await refuseSelfSignedUnderHaip(deps, tenantId, id, changes.activeCertificates, tx)
        }
        const updated = (await repo.update(id, changes, tx)) as KeyChainRow
        await recordAudit(tx, audit('update', id, { fields: Object.keys(patch) }))
        return toKeyChain(updated, deps.now())
      })
    },

    async rotate(id: string, input: KeyChainRotate): Promise<KeyChain> {
      return deps.db.transaction(async (tx) => {
        // The row lock makes concurrent rotations queue: each sees the chain the previous one left.
        const row = await repo.lock(id, tx)
        if (!row) throw new NotFoundError('key chain', id)
        const rotated = await rotateRow(deps, tx, row, input)
        await recordAudit(
          tx,
          audit('update', id, { rotated: true, kid: rotated.activeKid, retiredKid: row.activeKid }),
        )
        return toKeyChain(rotated, deps.now())
      })
    },

    /**
     * Refused (409) while a credential or presentation configuration references the chain, or a
     * status list signed with it exists: credentials name their list for as long as they live.
     */
    async delete(id: string): Promise<void> {
      try {
        await deps.db.transaction(async (tx) => {
          if (!(await repo.delete(id, tx))) throw new NotFoundError('key chain', id)
          await recordAudit(tx, audit('delete', id))
        })
      } catch (error) {
        const constraint = foreignKeyViolation(error)
        if (constraint === undefined) throw error
        throw new ConflictError(
          constraint === 'status_lists_key_chain_fk'
            ? `key chain '${id}' signs status lists that issued credentials point to`
            : `key chain '${id}' is used by a credential or presentation configuration`,
        )
      }
    },
  }
  // Signers and JWKS are cached per process: after the commit, drop this process's copy at once
  // (recordAudit announced the change, which other processes hear on commit).
  const invalidating =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args)
      } finally {
        tenantChanged(tenantId)
      }
    }
  return {
    ...service,
    create: invalidating(service.create),
    update: invalidating(service.update),
    rotate: invalidating(service.rotate),
    delete: invalidating(service.delete),
  }
}
export type KeyChainService = ReturnType<typeof createKeyChainService>

/**
 * The rotation job: rotates every key chain whose policy is due. SKIP LOCKED hands each row to one
 * pod; the due time is re-read under the lock, so a chain rotated meanwhile is not rotated twice.
 * Also forgets previous keys whose grace period ended. Returns the ids rotated.
 */
export async function rotateDueKeyChains(deps: KeyChainServiceDeps, limit = 20): Promise<string[]> {
  const now = deps.now()
  const rotated = await deps.db.transaction(async (tx) => {
    const due = await lockDueKeyChains(tx, now, limit)
    const rotated: string[] = []
    for (const row of due) {
      if (!generatedHere(row)) continue
      // A chain on a token this process cannot reach waits for a run that can; the others rotate.
      // The provider is asked before anything is written, so its refusal leaves the row as it was.
      if (row.kmsProvider !== 'db' && !deps.keys.providers[row.kmsProvider as ExternalProvider]) continue
      try {
        await rotateRow(deps, tx, row, {})
      } catch (error) {
        if (row.kmsProvider === 'db' || !(error instanceof DomainError)) throw error
        continue
      }
      await recordAudit(tx, {
        tenantId: row.tenantId,
        actorClientId: 'system:rotation',
        action: 'update',
        resourceType: 'key-chain',
        resourceId: row.id,
        detail: { rotated: true, automatic: true },
      })
      rotated.push(`${row.tenantId}/${row.id}`)
    }
    await forgetExpiredPreviousKeys(tx, now)
    return rotated
  })
  for (const key of rotated) tenantChanged(key.split('/')[0] as string)
  return rotated
}
