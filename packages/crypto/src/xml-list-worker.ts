/**
 * The worker thread that parses and checks TS 119 612 lists (see xml-list-checker). This module is
 * its own entry: the checker loads it with `import()` only, so a bundle puts it in a chunk of its
 * own (with what it imports), and `import.meta.url` names the file to start the worker from in
 * the bundles and in the TypeScript sources alike.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { readListOfTrustedLists } from './etsi-lotl'
import { readTrustedList } from './etsi-trusted-list'

export const WORKER_URL = import.meta.url
/** Marks the workers started from here (a test runner may run this module in a worker of its own). */
export const WORKER_ROLE = 'credential-service:xml-list-worker'

/** A list to check: its bytes as fetched, and how to check it. */
export type XmlListJob =
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

export type XmlListAnswer = { id: number; ok: unknown } | { id: number; error: string }

async function check(job: XmlListJob): Promise<unknown> {
  const xml = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength).toString('utf8')
  return job.kind === 'trusted-list'
    ? readTrustedList(xml, job.signerCertificates, job.serviceTypes, job.now)
    : readListOfTrustedLists(xml, job.signerCertificates, job.territories, job.now)
}

if (!isMainThread && parentPort && workerData?.role === WORKER_ROLE) {
  const port = parentPort
  port.on('message', async ({ id, job }: { id: number; job: XmlListJob }) => {
    let answer: XmlListAnswer
    try {
      answer = { id, ok: await check(job) }
    } catch (error) {
      answer = { id, error: error instanceof Error ? error.message : String(error) }
    }
    port.postMessage(answer)
  })
}
