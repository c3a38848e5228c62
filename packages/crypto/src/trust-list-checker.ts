import { Worker } from 'node:worker_threads'
import type { ListOfTrustedLists } from './etsi-lotl'
import type { TrustedListContent } from './etsi-trusted-list'
import { TrustedListError } from './etsi-xml'
import type { ListAnswer, ListJob } from './trust-list-worker'

/** How long one list may take to parse and check before its worker is stopped. */
export const LIST_CHECK_BUDGET_MS = 60_000
/** The worker's heap: a list of the largest size accepted needs a fraction of it. */
const WORKER_HEAP_MB = 512
/** An idle worker stays this long for the next list (a list of lists, the lists of several tenants). */
const IDLE_MS = 30_000

interface Pending {
  job: ListJob
  timeoutMs: number
  resolve: (value: unknown) => void
  reject: (error: Error) => void
}

/**
 * One worker thread, one list at a time: parsing and checking a list (xmldom, xml-crypto) costs
 * seconds of CPU for a list of several MB, and a hostile one could cost minutes; on the event loop
 * that would stall every request of the process (so would a JWS of several MB tried with each of
 * 20 signers). A list past its time budget has its worker terminated (the next list gets
 * a new one).
 */
function createChecker() {
  const queue: Pending[] = []
  let worker: Worker | undefined
  let current: { pending: Pending; id: number; timer: NodeJS.Timeout } | undefined
  let idle: NodeJS.Timeout | undefined
  let ids = 0

  const stop = () => {
    const stopping = worker
    worker = undefined
    void stopping?.terminate()
  }

  const finish = (settle: (pending: Pending) => void) => {
    if (!current) return
    clearTimeout(current.timer)
    const { pending } = current
    current = undefined
    settle(pending)
    void next()
  }

  const start = async (): Promise<Worker> => {
    const { WORKER_URL, WORKER_ROLE } = await import('./trust-list-worker')
    // From the TypeScript sources (tsx, vitest), the worker needs tsx too; a bundle is plain JS.
    const typescript = WORKER_URL.endsWith('.ts') && !process.execArgv.includes('tsx')
    const started = new Worker(new URL(WORKER_URL), {
      workerData: { role: WORKER_ROLE },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      ...(typescript ? { execArgv: [...process.execArgv, '--import', 'tsx'] } : {}),
    })
    started.on('message', (answer: ListAnswer) => {
      if (answer.id !== current?.id) return
      finish((pending) =>
        'ok' in answer ? pending.resolve(answer.ok) : pending.reject(new TrustedListError(answer.error)),
      )
    })
    const failed = (why: string) => {
      if (worker === started) worker = undefined
      finish((pending) => pending.reject(new TrustedListError(`checking the list failed: ${why}`)))
    }
    started.on('error', (error: Error & { code?: string }) =>
      failed(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `it needed more than ${WORKER_HEAP_MB} MB of memory`
          : error.message,
      ),
    )
    started.on('exit', () => {
      if (worker === started) failed('the worker stopped')
    })
    return started
  }

  const next = async () => {
    if (current) return
    const pending = queue.shift()
    if (!pending) {
      worker?.unref()
      idle = setTimeout(stop, IDLE_MS)
      idle.unref()
      return
    }
    clearTimeout(idle)
    const id = ++ids
    const timer = setTimeout(() => {
      stop()
      finish((p) =>
        p.reject(
          new TrustedListError(`checking the list took longer than ${p.timeoutMs / 1000} s and was stopped`),
        ),
      )
    }, pending.timeoutMs)
    current = { pending, id, timer }
    try {
      const started = worker ?? (await start())
      // Stopped meanwhile (its time ran out while the worker started): the next list has begun.
      if (current?.id !== id) {
        if (started !== worker) void started.terminate()
        return
      }
      worker = started
      worker.ref()
      worker.postMessage({ id, job: pending.job })
    } catch (error) {
      if (current?.id === id)
        finish((p) => p.reject(error instanceof Error ? error : new Error(String(error))))
    }
  }

  return (job: ListJob, timeoutMs: number): Promise<unknown> =>
    new Promise((resolve, reject) => {
      queue.push({ job, timeoutMs, resolve, reject })
      void next()
    })
}

/** The process's one checker; its worker starts with the first list. */
const checker = createChecker()
const run = (job: ListJob, timeoutMs = LIST_CHECK_BUDGET_MS) => checker(job, timeoutMs)

export interface ListCheckOptions {
  signerCertificates: string[]
  now: Date
  /** Longest the check may take; default LIST_CHECK_BUDGET_MS. */
  timeoutMs?: number
}

/** readTrustedList in the worker thread, on the bytes fetched. */
export function checkTrustedListOffThread(
  bytes: Uint8Array,
  options: ListCheckOptions & { serviceTypes?: string[] },
): Promise<TrustedListContent> {
  const { timeoutMs, ...rest } = options
  return run({ kind: 'trusted-list', bytes, ...rest }, timeoutMs) as Promise<TrustedListContent>
}

/** readListOfTrustedEntities (TS 119 602, a JWS) in the worker thread, on the bytes fetched. */
export function checkListOfTrustedEntitiesOffThread(
  bytes: Uint8Array,
  options: ListCheckOptions & { serviceTypes?: string[] },
): Promise<TrustedListContent> {
  const { timeoutMs, ...rest } = options
  return run({ kind: 'trusted-entities', bytes, ...rest }, timeoutMs) as Promise<TrustedListContent>
}

/** readListOfTrustedLists in the worker thread, on the bytes fetched. */
export function checkListOfTrustedListsOffThread(
  bytes: Uint8Array,
  options: ListCheckOptions & { territories?: string[] },
): Promise<ListOfTrustedLists> {
  const { timeoutMs, ...rest } = options
  return run({ kind: 'list-of-lists', bytes, ...rest }, timeoutMs) as Promise<ListOfTrustedLists>
}
