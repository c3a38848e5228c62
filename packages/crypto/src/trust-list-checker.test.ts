import { X509Certificate } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  buildTrustedList,
  createTestListSigner,
  issueTestCertificate,
  nestedList,
  signTrustedList,
} from './testing'
import { checkTrustedListOffThread } from './trust-list-checker'

const QC_CA = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC'
const fingerprints = (pems: string[]) => pems.map((pem) => new X509Certificate(pem).fingerprint256)

describe('S-133: lists are parsed and checked in a worker thread with a time budget', async () => {
  const signer = await createTestListSigner()
  const ca = await issueTestCertificate({ subject: 'CN=QC CA', ca: true })
  const list = (services: number) =>
    signTrustedList(
      buildTrustedList({
        issued: new Date('2026-01-01T00:00:00Z'),
        nextUpdate: new Date('2099-07-01T00:00:00Z'),
        services: Array.from({ length: services }, () => ({ type: QC_CA, certificates: [ca.pem] })),
      }),
      signer,
    )
  const options = { signerCertificates: [signer.certificatePem], now: new Date() }

  it('answers what readTrustedList reads, dates as dates; a refusal keeps its reason', async () => {
    const { certificates, ...content } = await checkTrustedListOffThread(Buffer.from(await list(1)), options)
    expect(fingerprints(certificates)).toStrictEqual(fingerprints([ca.pem]))
    expect(content).toStrictEqual({
      listIssuedAt: new Date('2026-01-01T00:00:00Z'),
      nextUpdate: new Date('2099-07-01T00:00:00Z'),
      schemeTerritory: 'EU',
    })
    await expect(checkTrustedListOffThread(Buffer.from(nestedList(4000)), options)).rejects.toThrow(
      'the list is refused before parsing: its elements nest deeper than 64 levels',
    )
  })

  it('stops a check past its time budget and reads the next list in a new worker', async () => {
    const slow = Buffer.from(await list(400))
    const started = Date.now()
    await expect(checkTrustedListOffThread(slow, { ...options, timeoutMs: 50 })).rejects.toThrow(
      'checking the list took longer than 0.05 s and was stopped',
    )
    // Stopped at its budget, not when the check would have ended (about a second on one core).
    expect(Date.now() - started).toBeLessThan(slow.length / 1000)
    const content = await checkTrustedListOffThread(slow, options)
    expect(fingerprints(content.certificates)).toStrictEqual(fingerprints([ca.pem]))
  })

  it('checks lists one at a time, each with its own budget and answer', async () => {
    const [good, hostile] = [Buffer.from(await list(2)), Buffer.from(nestedList(100))]
    const answers = await Promise.allSettled([
      checkTrustedListOffThread(good, options),
      checkTrustedListOffThread(hostile, options),
      checkTrustedListOffThread(good, options),
    ])
    expect(answers.map((answer) => answer.status)).toStrictEqual(['fulfilled', 'rejected', 'fulfilled'])
  })
})
