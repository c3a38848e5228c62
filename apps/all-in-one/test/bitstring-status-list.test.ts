import { testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, decodeProtectedHeader, exportJWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { checkVcJwt } from './vcdm-verifier'
import { issueOverHttp } from './wallet'

type Entry = Record<string, string>

describe.each(testDatabases())(
  'issue 38 step 2: W3C Bitstring Status List credentials on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let baseUrl: string
    let auth: Record<string, string>

    beforeAll(async () => {
      const port = await freePort()
      baseUrl = `http://127.0.0.1:${port}`
      const started = await startAllInOneWorld(testDatabase, 'format-conformance', baseUrl)
      app = started.app
      await app.listen({ host: '127.0.0.1', port })
      auth = started.tenants.a.auth
    })
    afterAll(() => app.close())

    const issue = () =>
      issueOverHttp({
        apiBase: baseUrl,
        auth,
        configurationId: 'w3c-vc',
        claims: { credentialSubject: { given_name: 'Erika' } },
      })
    const entries = async () =>
      (decodeJwt((await issue()).credential) as { credentialStatus: Entry[] }).credentialStatus

    it('VCDM 2.0 §4 and VC-JOSE-COSE §3, checked by a verifier written from their text: our credential breaks no rule and binds the proof key', async () => {
      const issued = await issue()
      const { problems, payload } = checkVcJwt(issued.credential)
      expect(problems).toStrictEqual([])
      expect(payload).toMatchObject({
        type: ['VerifiableCredential', 'ConformanceCredential'],
        credentialSubject: { given_name: 'Erika' },
        cnf: { jwk: await exportJWK(issued.holder.publicKey) },
      })
      // The status list credential it names is a VC-JWT of the same issuer, under the same rules.
      const [entry] = payload.credentialStatus as Entry[]
      const list = checkVcJwt(await (await fetch(entry?.statusListCredential as string)).text())
      expect(list.problems).toStrictEqual([])
      expect(list.payload.issuer).toBe(payload.issuer)
    })

    it('the independent verifier can fail: a payload changed under the signature, a vc claim, no issuer', async () => {
      const [header, body, signature] = (await issue()).credential.split('.')
      const changed = { ...(decodeJwt(`${header}.${body}.`) as Record<string, unknown>), vc: {}, issuer: 7 }
      const forged = `${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`
      expect(checkVcJwt(forged).problems).toStrictEqual([
        'a vc or vp claim is present',
        'the signature does not verify with the x5c leaf',
        'issuer is not a URL',
        'iss does not match issuer',
      ])
    })

    it('§2.1: a revocation and a suspension BitstringStatusListEntry at one index, statusListIndex a string', async () => {
      const [revocation, suspension] = await entries()
      expect(revocation).toStrictEqual({
        id: `${revocation?.statusListCredential}#${revocation?.statusListIndex}`,
        type: 'BitstringStatusListEntry',
        statusPurpose: 'revocation',
        statusListIndex: expect.stringMatching(/^\d+$/),
        statusListCredential: expect.stringMatching(/\/status-lists\/[^/]+\/bitstring\/revocation$/),
      })
      expect(suspension).toMatchObject({
        statusPurpose: 'suspension',
        statusListIndex: revocation?.statusListIndex,
        statusListCredential: revocation?.statusListCredential?.replace(/revocation$/, 'suspension'),
      })
    })

    it('§2.2: the status list credential is a vc+jwt BitstringStatusListCredential with its purpose, cacheable with an ETag', async () => {
      const [revocation] = await entries()
      const uri = revocation?.statusListCredential as string
      const response = await fetch(uri)
      expect(response.headers.get('content-type')).toBe('application/vc+jwt')
      expect(response.headers.get('cache-control')).toBe('public, max-age=300')
      const token = await response.text()
      expect(decodeProtectedHeader(token)).toMatchObject({ typ: 'vc+jwt', x5c: expect.any(Array) })
      expect(decodeJwt(token)).toMatchObject({
        '@context': ['https://www.w3.org/ns/credentials/v2'],
        id: uri,
        type: ['VerifiableCredential', 'BitstringStatusListCredential'],
        issuer: expect.stringMatching(/\/issuers\//),
        credentialSubject: {
          type: 'BitstringStatusList',
          statusPurpose: 'revocation',
          encodedList: expect.stringMatching(/^u[A-Za-z0-9_-]+$/),
          ttl: 300_000,
        },
      })
      const etag = response.headers.get('etag') as string
      expect((await fetch(uri, { headers: { 'if-none-match': etag } })).status).toBe(304)
    })

    it('an unknown list is 404, a purpose other than revocation or suspension 400', async () => {
      const [revocation] = await entries()
      const uri = revocation?.statusListCredential as string
      expect((await fetch(uri.replace(/\/status-lists\/[^/]+\//, '/status-lists/nope/'))).status).toBe(404)
      expect((await fetch(uri.replace(/revocation$/, 'refresh'))).status).toBe(400)
    })
  },
)
