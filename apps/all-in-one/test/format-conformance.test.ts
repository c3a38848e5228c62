import { gunzipSync } from 'node:zlib'
import { CREDENTIAL_FORMATS, type CredentialFormat, zRequestObject } from '@credential-service/core-domain'
import { msoStatusEntry } from '@credential-service/crypto'
import { testDatabases } from '@credential-service/db-schema/testing'
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list'
import { decode as cborDecode } from 'cbor-x'
import type { FastifyInstance } from 'fastify'
import { base64url, decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { issueOverHttp, mdocDeviceResponse, presentSdJwt, presentVcJwt } from './wallet'

type Issued = Awaited<ReturnType<typeof issueOverHttp>>
type StatusEntry = { idx: number; uri: string }

/** What the wallet binds a presentation to (OpenID4VP 1.0 §14.1): normally the request's own values. */
interface Binding {
  nonce: string
  /** The client id: the KB-JWT `aud`, or the mdoc SessionTranscript's client id. */
  audience: string
  responseUri: string
}

/**
 * The wallet's side of one format. Typed over the format enum: a new format does not compile
 * here until it has its case (world `format-conformance`: a configuration `<configurationId>` and
 * the presentation configurations `<configurationId>-check`, `-other-type`, `-missing-claim`).
 */
interface FormatCase {
  configurationId: string
  /** The offer's claims: `given_name` only, so `family_name` is a claim the credential lacks. */
  claims: Record<string, unknown>
  present(issued: Issued, binding: Binding): Promise<string>
  statusEntry(credential: string): Promise<StatusEntry | undefined>
  /** The entry's status as its list, fetched from the entry's URI, says: 0 valid, else not. */
  statusOf(entry: StatusEntry): Promise<number>
  /** The refusal of a presentation of another type than the query asks for. */
  wrongType: RegExp
  /** The refusals of a presentation bound to another nonce, and to another audience. */
  wrongNonce: RegExp
  wrongAudience: RegExp
  /** The refusal of a credential whose issuer chains to none of the verifier's anchors. */
  untrusted: RegExp
}

/** A Token Status List entry's status (TSL §4.1), read with @sd-jwt/jwt-status-list. */
const tokenStatus = async (entry: StatusEntry) =>
  getListFromStatusListJWT(await (await fetch(entry.uri)).text()).getStatus(entry.idx)

/**
 * A Bitstring Status List entry's bit, read from the spec text (§2.2): the credential's
 * `encodedList` is "u" + base64url of the GZIP-compressed bitstring, index 0 the left-most bit.
 */
async function bitstringStatus(entry: StatusEntry): Promise<number> {
  const response = await fetch(entry.uri)
  expect(response.headers.get('content-type')).toBe('application/vc+jwt')
  const list = decodeJwt(await response.text()) as { credentialSubject: { encodedList: string } }
  const bits = gunzipSync(Buffer.from(list.credentialSubject.encodedList.slice(1), 'base64url'))
  expect(bits.length).toBeGreaterThanOrEqual(16_384)
  return ((bits[entry.idx >> 3] as number) >> (7 - (entry.idx & 7))) & 1
}

const NS = 'org.iso.18013.5.1'
const DOCTYPE = 'org.iso.18013.5.1.mDL'

const cases: { [F in CredentialFormat]: FormatCase } = {
  'dc+sd-jwt': {
    configurationId: 'sd-jwt-vc',
    claims: { given_name: 'Erika' },
    present: (issued, binding) =>
      presentSdJwt({
        credential: issued.credential,
        holder: issued.holder,
        disclose: { given_name: true },
        nonce: binding.nonce,
        aud: binding.audience,
      }),
    statusEntry: async (credential) =>
      (decodeJwt(credential.split('~')[0] as string) as { status?: { status_list?: StatusEntry } }).status
        ?.status_list,
    statusOf: tokenStatus,
    wrongType: /^vct 'urn:example:conformance:1' was not requested/,
    wrongNonce: /^the SD-JWT did not verify: .*Invalid Nonce/,
    wrongAudience: /^the key binding JWT aud is not '/,
    untrusted: /^the issuer does not chain to a trust anchor of this tenant/,
  },
  mso_mdoc: {
    configurationId: 'mso-mdoc',
    claims: { [NS]: { given_name: 'Erika' } },
    present: (issued, binding) =>
      mdocDeviceResponse({
        credential: issued.credential,
        holder: issued.holder,
        docType: DOCTYPE,
        clientId: binding.audience,
        nonce: binding.nonce,
        responseUri: binding.responseUri,
      }),
    statusEntry: async (credential) => {
      const issuerSigned = cborDecode(base64url.decode(credential)) as { issuerAuth: unknown[] }
      return msoStatusEntry(issuerSigned.issuerAuth[2] as Uint8Array)
    },
    statusOf: tokenStatus,
    wrongType: /^docType 'org\.iso\.18013\.5\.1\.mDL' was not requested/,
    // The device signature is over a SessionTranscript of the request's client id and nonce (V-30).
    wrongNonce: /^the mdoc did not verify: Device signature must be valid/,
    wrongAudience: /^the mdoc did not verify: Device signature must be valid/,
    untrusted:
      /^the mdoc did not verify: Issuer certificate must be valid \(x5chain does not chain to a trust anchor\)/,
  },
  jwt_vc_json: {
    configurationId: 'w3c-vc',
    claims: { credentialSubject: { given_name: 'Erika' } },
    present: (issued, binding) =>
      presentVcJwt({
        credential: issued.credential,
        holder: issued.holder,
        nonce: binding.nonce,
        aud: binding.audience,
      }),
    // W3C Bitstring Status List §2.1: statusListIndex is a string of the bit's index; the
    // revocation entry is read here (a suspension entry comes with it).
    statusEntry: async (credential) => {
      const statuses = (decodeJwt(credential) as { credentialStatus?: Record<string, string>[] })
        .credentialStatus
      const status = statuses?.find((entry) => entry.statusPurpose === 'revocation')
      return status && { idx: Number(status.statusListIndex), uri: status.statusListCredential as string }
    },
    statusOf: bitstringStatus,
    wrongType: /^type \["VerifiableCredential","ConformanceCredential"\] was not requested/,
    wrongNonce: /^the VP JWT nonce is not the request nonce/,
    wrongAudience: /^the VP JWT aud is not '/,
    untrusted: /^the issuer does not chain to a trust anchor of this tenant/,
  },
}

// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
type Loose = any

describe.each(testDatabases())('issue 38: every registered credential format on $name', (testDatabase) => {
  let app: FastifyInstance
  let baseUrl: string
  let tenants: { a: Record<string, string>; b: Record<string, string> }

  const call = async (method: string, path: string, body: unknown, auth: Record<string, string>) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...auth },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, body: (text ? JSON.parse(text) : null) as Loose }
  }

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    // The `format-conformance` world: tenant a issues one configuration per format, with status
    // entries, and asks for it three ways; tenant b asks for the same types, trusting only itself.
    const started = await startAllInOneWorld(testDatabase, 'format-conformance', baseUrl, {
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      // A revocation is refused at the next presentation, not after the list's ttl.
      STATUS_LIST_CACHE_MAX_SECONDS: '0',
    })
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    tenants = { a: started.tenants.a.auth, b: started.tenants.b.auth }
  })
  afterAll(() => app.close())

  it('registers a case for every format of the enum', () => {
    expect(Object.keys(cases).sort()).toStrictEqual([...CREDENTIAL_FORMATS].sort())
  })

  describe.each(CREDENTIAL_FORMATS.map((format) => ({ format, ...cases[format] })))('$format', (format) => {
    const issue = () =>
      issueOverHttp({
        apiBase: baseUrl,
        auth: tenants.a,
        configurationId: format.configurationId,
        claims: format.claims,
      })

    /**
     * Presents `issued` to `tenant`'s presentation configuration `ask` over HTTP (direct_post),
     * bound as `tamper` says; answers the presentation session.
     */
    async function present(
      issued: Issued,
      ask: string,
      options: { tenant?: 'a' | 'b'; tamper?: Partial<Binding> } = {},
    ) {
      const auth = tenants[options.tenant ?? 'a']
      const request = (await call('POST', '/api/presentation-requests', { presentationConfigId: ask }, auth))
        .body
      const claims = zRequestObject.parse(decodeJwt(await (await fetch(request.requestUri)).text()))
      const vp = await format.present(issued, {
        nonce: claims.nonce,
        audience: claims.client_id,
        responseUri: claims.response_uri,
        ...options.tamper,
      })
      await fetch(claims.response_uri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          vp_token: JSON.stringify({ conformance: [vp] }),
          state: claims.state ?? '',
        }),
      })
      return (await call('GET', `/api/sessions/${request.sessionId}`, undefined, auth)).body
    }

    const check = `${format.configurationId}-check`

    it('V-27, V-28/V-29: issued, presented and verified, with the asked claim', async () => {
      const session = await present(await issue(), check)
      expect(session).toMatchObject({ status: 'verified', failureReason: null })
      expect(JSON.stringify(session)).toContain('Erika')
    })

    it('TSL §6, Bitstring Status List §3.2, V-33: the credential names a status list entry, VALID until revoked; revoked, it is refused', async () => {
      const issued = await issue()
      const entry = (await format.statusEntry(issued.credential)) as StatusEntry
      expect(entry).toStrictEqual({ idx: expect.any(Number), uri: expect.any(String) })
      expect(entry.uri.startsWith(`${baseUrl}/issuers/`)).toBe(true)
      const bit = () => format.statusOf(entry)
      expect(await bit()).toBe(0)
      const revoked = await call(
        'POST',
        `/api/sessions/${issued.sessionId}/status`,
        { status: 'revoked' },
        tenants.a,
      )
      expect(revoked.body).toMatchObject({ status: 'revoked', changed: 1 })
      expect(await bit()).toBe(1)
      expect(await present(issued, check)).toMatchObject({
        status: 'failed',
        failureReason: 'the credential is revoked (INVALID)',
      })
    })

    it('TSL §7.1, Bitstring Status List §2.1 (suspension): a suspended credential is refused, and verifies again once valid', async () => {
      const issued = await issue()
      const set = (status: string) =>
        call('POST', `/api/sessions/${issued.sessionId}/status`, { status }, tenants.a)
      expect((await set('suspended')).body).toMatchObject({ status: 'suspended', changed: 1 })
      expect(await present(issued, check)).toMatchObject({
        status: 'failed',
        failureReason: 'the credential is suspended',
      })
      expect((await set('valid')).body).toMatchObject({ status: 'valid', changed: 1 })
      expect(await present(issued, check)).toMatchObject({ status: 'verified', failureReason: null })
    })

    it('V-27: a credential of another type than the query asks for is refused', async () => {
      const session = await present(await issue(), `${format.configurationId}-other-type`)
      expect(session).toMatchObject({
        status: 'failed',
        failureReason: expect.stringMatching(format.wrongType),
      })
    })

    it('V-27, V-28, V-30: a presentation bound to another nonce, or another audience, is refused', async () => {
      const issued = await issue()
      const refusals = [
        { tamper: { nonce: 'another-nonce' }, reason: format.wrongNonce },
        { tamper: { audience: 'x509_san_dns:elsewhere.example' }, reason: format.wrongAudience },
      ]
      for (const { tamper, reason } of refusals) {
        const session = await present(issued, check, { tamper })
        expect(session).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(reason) })
      }
    })

    it('V-32, HAIP 6.1.1: a verifier that does not trust the issuer refuses its credential', async () => {
      const session = await present(await issue(), check, { tenant: 'b' })
      expect(session).toMatchObject({
        status: 'failed',
        failureReason: expect.stringMatching(format.untrusted),
      })
    })

    it('OpenID4VP §6.3: a claim the credential lacks is refused', async () => {
      const session = await present(await issue(), `${format.configurationId}-missing-claim`)
      expect(session).toMatchObject({
        status: 'failed',
        failureReason: expect.stringMatching(/^requested claims missing or not matching: /),
      })
    })
  })
})
