import { newId, zKeyChainCreate } from '@credential-service/core-domain'
import {
  createKeyChainRepository,
  createTenantRepository,
  type Executor,
  recordAudit,
} from '@credential-service/db-schema'
import { type KeyChainServiceDeps, keyChainColumns } from './key-chain-service'

/** Id of the default key chain a tenant gets on first need (another when a chain already has it). */
export const DEFAULT_KEY_CHAIN_ID = 'default'

/**
 * `POST /api/key-chains` `{ "source": "generate" }`: ES256, leaf issued by a root of its own, with
 * the tenant's country as `C=` when it has one (ISO 18013-5 Annex B.1: mso_mdoc needs it).
 */
const defaultProfile = (country: string | null | undefined) =>
  zKeyChainCreate.parse({
    source: 'generate',
    description: 'Default signing key chain, created for a credential configuration that named none',
    ...(country ? { certificate: { country } } : {}),
  })

export interface DefaultKeyChain {
  id: string
  /** Made by this call (within the caller's transaction). */
  created: boolean
}

/**
 * The tenant's default signing key chain, created on first need with the `source: generate`
 * defaults, inside the caller's transaction (a refused configuration leaves no key chain behind).
 *
 * Race-safe across processes: the insert carries `is_default`, and the partial unique index
 * `key_chains_one_default_per_tenant` lets one such row exist per tenant. A concurrent creator's
 * insert waits for the first transaction and then does nothing (`on conflict do nothing`), and it
 * reads the committed default. The key it generated is dropped unused.
 */
export async function ensureDefaultKeyChain(
  deps: KeyChainServiceDeps,
  tenantId: string,
  actorClientId: string,
  tx: Executor,
): Promise<DefaultKeyChain> {
  const repo = createKeyChainRepository(deps.db, tenantId)
  const existing = await repo.getDefault(tx)
  if (existing) return { id: existing.id, created: false }
  // `default` unless a key chain (not the default) already has that id.
  const id = (await repo.get(DEFAULT_KEY_CHAIN_ID, tx)) ? newId('kc') : DEFAULT_KEY_CHAIN_ID
  const now = deps.now()
  const tenant = await createTenantRepository(deps.db).get(tenantId, tx)
  const columns = await keyChainColumns(deps, tenantId, id, defaultProfile(tenant?.country), now)
  const inserted = await repo.insert({ ...columns, isDefault: true }, tx)
  if (!inserted) {
    const winner = await repo.getDefault(tx)
    if (winner) return { id: winner.id, created: false }
    // The id was taken meanwhile by a key chain that is not the default: try once more.
    return ensureDefaultKeyChain(deps, tenantId, actorClientId, tx)
  }
  await recordAudit(tx, {
    tenantId,
    actorClientId,
    action: 'create',
    resourceType: 'key-chain',
    resourceId: id,
    detail: { source: 'generate', default: true, kid: inserted.activeKid },
  })
  return { id, created: true }
}

/** Per connection pool and tenant: the save that is making the tenant's default key chain. */
const firstNeeds = new WeakMap<object, Map<string, Promise<unknown>>>()

/**
 * Runs `save`, a transaction that may make the tenant's default key chain, so that it waits for
 * another one of this process without holding a pooled connection. A concurrent first create
 * waits on the unique index inside its transaction, holding its connection until the first one
 * commits; several such waiters left a small pool empty, and other requests answered 503. Now one
 * save per pool and tenant makes the default (and may wait on the index, for another process),
 * the others wait here, then find the default and run at once. Once the tenant has a default, no
 * save waits. (Correctness stays with the index; this only spares connections.)
 */
export async function withDefaultKeyChainTurn<T>(
  deps: Pick<KeyChainServiceDeps, 'db'>,
  tenantId: string,
  save: () => Promise<T>,
): Promise<T> {
  const repo = createKeyChainRepository(deps.db, tenantId)
  let turns = firstNeeds.get(deps.db)
  if (!turns) {
    turns = new Map()
    firstNeeds.set(deps.db, turns)
  }
  for (;;) {
    if (await repo.getDefault()) return save()
    const running = turns.get(tenantId)
    if (!running) break
    await running
  }
  // No await between the check above and taking the turn.
  const mine = save()
  const settled = mine.then(
    () => undefined,
    () => undefined,
  )
  turns.set(tenantId, settled)
  try {
    return await mine
  } finally {
    if (turns.get(tenantId) === settled) turns.delete(tenantId)
  }
}
