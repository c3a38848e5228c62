/**
 * The worker thread that parses and checks fetched trust lists (see trust-list-checker). This
 * module is its own entry: the checker loads it with `import()` only, so a bundle puts it in a
 * chunk of its own (with what it imports), and `import.meta.url` names the file to start the
 * worker from in the bundles and in the TypeScript sources alike.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { readListOfTrustedEntities } from './etsi-lote'
import { readListOfTrustedLists } from './etsi-lotl'
import { readTrustedList } from './etsi-trusted-list'

export const WORKER_URL = import.meta.url
/** Marks the workers started from here (a test runner may run this module in a worker of its own). */
export const WORKER_ROLE = 'credential-service:trust-list-worker'

/** A list to check: its bytes as fetched, and how to check it. */
export type ListJob =
  | {
      kind: 'trusted-list'
      bytes: Uint8Array
      signerCertificates: string[]
      serviceTypes?: string[]
      now: Date
    }
  | {
      kind: 'list-of-lists'
      bytes: Uint8Array
      signerCertificates: string[]
      territories?: string[]
      now: Date
    }
  | {
      kind: 'trusted-entities'
      bytes: Uint8Array
      signerCertificates: string[]
      serviceTypes?: string[]
      now: Date
    }

export type ListAnswer = { id: number; ok: unknown } | { id: number; error: string }

async function check(job: ListJob): Promise<unknown> {
  const text = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength).toString('utf8')
  if (job.kind === 'trusted-entities')
    return readListOfTrustedEntities(text, job.signerCertificates, job.serviceTypes)
  return job.kind === 'trusted-list'
    ? readTrustedList(text, job.signerCertificates, job.serviceTypes, job.now)
    : readListOfTrustedLists(text, job.signerCertificates, job.territories, job.now)
}

if (!isMainThread && parentPort && workerData?.role === WORKER_ROLE) {
  const port = parentPort
  port.on('message', async ({ id, job }: { id: number; job: ListJob }) => {
    let answer: ListAnswer
    try {
      answer = { id, ok: await check(job) }
    } catch (error) {
      answer = { id, error: error instanceof Error ? error.message : String(error) }
    }
    port.postMessage(answer)
  })
}
