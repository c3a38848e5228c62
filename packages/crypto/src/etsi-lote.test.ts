import { X509Certificate } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { readListOfTrustedEntities } from './etsi-lote'
import {
  buildListOfTrustedEntities,
  createTestListSigner,
  issueTestCertificate,
  signListOfTrustedEntities,
} from './testing'

const PID_ISSUANCE = 'http://uri.etsi.org/19602/SvcType/PID/Issuance'
const PID_REVOCATION = 'http://uri.etsi.org/19602/SvcType/PID/Revocation'

describe('ETSI TS 119 602 lists of trusted entities (JSON, compact JWS)', async () => {
  const signer = await createTestListSigner()
  const other = await createTestListSigner('CN=Someone Else')
  const issuing = await issueTestCertificate({ subject: 'CN=PID Issuing CA', ca: true })
  const revoking = await issueTestCertificate({ subject: 'CN=PID Status CA', ca: true })
  const issued = new Date('2026-01-01T00:00:00Z')
  const nextUpdate = new Date('2026-07-01T00:00:00Z')
  const payload = buildListOfTrustedEntities({
    issued,
    nextUpdate,
    services: [
      { type: PID_ISSUANCE, certificates: [issuing.pem] },
      { type: PID_REVOCATION, certificates: [revoking.pem] },
    ],
  })
  const jws = await signListOfTrustedEntities(payload, signer)
  const subjects = (pems: string[]) => pems.map((pem) => new X509Certificate(pem).subject).sort()

  it('reads the dates and the certificates of a list signed by an allowed signer, by service type', async () => {
    const all = await readListOfTrustedEntities(jws, [other.certificatePem, signer.certificatePem])
    expect(all).toMatchObject({ listIssuedAt: issued, nextUpdate })
    expect(subjects(all.certificates)).toEqual(['CN=PID Issuing CA', 'CN=PID Status CA'])
    const issuers = await readListOfTrustedEntities(jws, [signer.certificatePem], [PID_ISSUANCE])
    expect(subjects(issuers.certificates)).toEqual(['CN=PID Issuing CA'])
  })

  it('refuses a list signed by another key (even with that key’s certificate in x5c) and a changed one', async () => {
    const foreign = await signListOfTrustedEntities(payload, other)
    await expect(readListOfTrustedEntities(foreign, [signer.certificatePem])).rejects.toThrow(
      /does not verify/,
    )
    const [header, body, signature] = jws.split('.') as [string, string, string]
    const changed = Buffer.from(
      JSON.stringify({ ...payload, LoTE: { ...payload.LoTE, TrustedEntitiesList: [] } }),
    ).toString('base64url')
    expect(body).not.toBe(changed)
    await expect(
      readListOfTrustedEntities(`${header}.${changed}.${signature}`, [signer.certificatePem]),
    ).rejects.toThrow(/does not verify/)
  })
})
