import { testDatabases } from '@credential-service/db-schema/testing'
import {
  CompactEncrypt,
  compactDecrypt,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type JWK,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type IssuerFixture, type Loose, startIssuerFixture } from './issuer-fixture'

// The wallet library (@openid4vc/openid4vci 0.4.6) neither encrypts credential requests nor
// decrypts credential responses: these requests are made with jose, as a wallet would (§10).
describe.each(testDatabases())(
  'OpenID4VCI 1.0 §10 credential request and response encryption on $name',
  (testDatabase) => {
    let f: IssuerFixture
    let metadata: Loose

    beforeAll(async () => {
      f = await startIssuerFixture(testDatabase)
      metadata = await (
        await fetch(`${f.baseUrl}/.well-known/openid-credential-issuer/issuers/${f.tenant}`)
      ).json()
    })
    afterAll(() => f.close())

    const issuerKey = (): JWK => metadata.credential_request_encryption.jwks.keys[0]

    /** A wallet's response encryption key pair: the public JWK carries `alg` and a `kid` (§8.2). */
    async function walletKey(kid = 'wallet-key-1') {
      const pair = await generateKeyPair('ECDH-ES', { crv: 'P-256' })
      return {
        privateKey: pair.privateKey,
        jwk: { ...(await exportJWK(pair.publicKey)), alg: 'ECDH-ES', kid },
      }
    }

    async function encrypt(body: unknown, header: Record<string, unknown> = {}, to: JWK = issuerKey()) {
      return new CompactEncrypt(
        new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
      )
        .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: to.kid as string, ...header })
        .encrypt(to)
    }

    const send = (path: string, accessToken: string, body: string, contentType: string) =>
      fetch(`${f.issuer}/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': contentType },
        body,
      })

    async function credentialBody(configurationId: string, proofs = 1) {
      const nonce = await f.nonce()
      return {
        credential_configuration_id: configurationId,
        proofs: { jwt: await Promise.all(Array.from({ length: proofs }, () => f.proof(nonce))) },
      }
    }

    async function decrypt(response: Response, privateKey: Parameters<typeof compactDecrypt>[1]) {
      const jwe = await response.text()
      const { plaintext, protectedHeader } = await compactDecrypt(jwe, privateKey)
      return { header: protectedHeader, body: JSON.parse(new TextDecoder().decode(plaintext)) as Loose }
    }

    async function expectError(response: Response, error: string) {
      expect(response.status).toBe(400)
      // §8.3.1.2: error bodies are never encrypted.
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await response.json()).toStrictEqual({ error, error_description: expect.any(String) })
    }

    it('I-11 / OID4VCI §12.2.4: credential_response_encryption and credential_request_encryption are offered together; every key has a unique kid; a tenant setting makes them required', async () => {
      expect(metadata.credential_response_encryption).toStrictEqual({
        alg_values_supported: ['ECDH-ES'],
        enc_values_supported: ['A128GCM', 'A256GCM'],
        zip_values_supported: ['DEF'],
        encryption_required: false,
      })
      expect(metadata.credential_request_encryption).toStrictEqual({
        jwks: {
          keys: [
            {
              kty: 'EC',
              crv: 'P-256',
              x: expect.any(String),
              y: expect.any(String),
              kid: expect.any(String),
              use: 'enc',
              alg: 'ECDH-ES',
            },
          ],
        },
        enc_values_supported: ['A128GCM', 'A256GCM'],
        zip_values_supported: ['DEF'],
        encryption_required: false,
      })
      const kids = metadata.credential_request_encryption.jwks.keys.map((k: JWK) => k.kid)
      expect(new Set(kids).size).toBe(kids.length)
      expect(metadata.deferred_credential_endpoint).toBe(`${f.issuer}/deferred-credential`)
      // Another tenant has its own key.
      const other = `enc-other-${crypto.randomUUID().slice(0, 8)}`
      expect((await f.post('/api/tenants', { id: other, name: 'Other' }, f.root)).status).toBe(201)
      const otherMetadata: Loose = await (
        await fetch(`${f.baseUrl}/.well-known/openid-credential-issuer/issuers/${other}`)
      ).json()
      expect(otherMetadata.credential_request_encryption.jwks.keys[0].kid).not.toBe(issuerKey().kid)
    })

    it('I-71 / OID4VCI §10: an encrypted request with credential_response_encryption gets application/jwt: alg from the jwk, kid copied, no zip unless asked', async () => {
      const wallet = await walletKey()
      const { accessToken } = await f.redeem('pid')
      const jwe = await encrypt({
        ...(await credentialBody('pid', 2)),
        credential_response_encryption: { jwk: wallet.jwk, enc: 'A256GCM' },
      })
      const response = await send('credential', accessToken, jwe, 'application/jwt')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^application\/jwt/)
      const { header, body } = await decrypt(response, wallet.privateKey)
      expect(header).toStrictEqual({
        alg: 'ECDH-ES',
        enc: 'A256GCM',
        kid: 'wallet-key-1',
        epk: expect.any(Object),
      })
      expect(body).toStrictEqual({
        credentials: [{ credential: expect.any(String) }, { credential: expect.any(String) }],
        notification_id: expect.any(String),
      })
      expect(decodeJwt((body.credentials[0].credential as string).split('~')[0] as string)).toMatchObject({
        iss: f.issuer,
        vct: 'urn:eudi:pid:1',
      })
    })

    it('I-71 / OID4VCI §10: zip DEF compresses the response; the request may be compressed too', async () => {
      const wallet = await walletKey()
      const { accessToken } = await f.redeem('pid')
      const jwe = await encrypt(
        {
          ...(await credentialBody('pid')),
          credential_response_encryption: { jwk: wallet.jwk, enc: 'A128GCM', zip: 'DEF' },
        },
        { zip: 'DEF' },
      )
      const response = await send('credential', accessToken, jwe, 'application/jwt')
      expect(response.status).toBe(200)
      const { header, body } = await decrypt(response, wallet.privateKey)
      expect(header).toMatchObject({ alg: 'ECDH-ES', enc: 'A128GCM', zip: 'DEF' })
      expect(body.credentials).toHaveLength(1)
    })

    it('I-73 / OID4VCI §9.1: the deferred answer is encrypted to the key sent with the deferred request, not the first one', async () => {
      const first = await walletKey('first')
      const second = await walletKey('second')
      f.provider.answer('pending')
      const { accessToken } = await f.redeem('deferred-pid')
      const pending = await send(
        'credential',
        accessToken,
        await encrypt({
          ...(await credentialBody('deferred-pid')),
          credential_response_encryption: { jwk: first.jwk, enc: 'A128GCM' },
        }),
        'application/jwt',
      )
      expect(pending.status).toBe(202)
      const { body: transaction } = await decrypt(pending, first.privateKey)
      expect(transaction).toStrictEqual({ transaction_id: expect.any(String), interval: 1 })
      f.provider.answer({ given_name: 'Sealed' })
      // The provider is asked again once the interval (1 s) has passed.
      await new Promise((resolve) => setTimeout(resolve, 1150))
      const delivered = await send(
        'deferred-credential',
        accessToken,
        await encrypt({
          transaction_id: transaction.transaction_id,
          credential_response_encryption: { jwk: second.jwk, enc: 'A256GCM' },
        }),
        'application/jwt',
      )
      expect(delivered.status).toBe(200)
      const jwe = await delivered.clone().text()
      expect(decodeProtectedHeader(jwe)).toMatchObject({ kid: 'second', enc: 'A256GCM' })
      await expect(compactDecrypt(jwe, first.privateKey)).rejects.toThrow()
      const { body } = await decrypt(delivered, second.privateKey)
      expect(body).toStrictEqual({
        credentials: [{ credential: expect.any(String) }],
        notification_id: expect.any(String),
      })
    })

    it('S-66 / I-71: RSA1_5, an unsupported enc or zip, a jwk without alg or with a private part are invalid_encryption_parameters, answered in clear', async () => {
      const wallet = await walletKey()
      const { accessToken } = await f.redeem('pid')
      const { alg: _alg, ...withoutAlg } = wallet.jwk
      const rsa = await generateKeyPair('RSA1_5' as never, { modulusLength: 2048, extractable: true }).catch(
        () => generateKeyPair('RSA-OAEP-256', { modulusLength: 2048 }),
      )
      const privatePair = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true })
      const cases: Record<string, unknown>[] = [
        { jwk: { ...(await exportJWK(rsa.publicKey)), alg: 'RSA1_5' }, enc: 'A128GCM' },
        { jwk: wallet.jwk, enc: 'A128CBC-HS256' },
        { jwk: wallet.jwk, enc: 'A128GCM', zip: 'GZIP' },
        { jwk: withoutAlg, enc: 'A128GCM' },
        { jwk: { ...(await exportJWK(privatePair.privateKey)), alg: 'ECDH-ES' }, enc: 'A128GCM' },
        { enc: 'A128GCM' },
      ]
      for (const params of cases) {
        const jwe = await encrypt({
          ...(await credentialBody('pid')),
          credential_response_encryption: params,
        })
        await expectError(
          await send('credential', accessToken, jwe, 'application/jwt'),
          'invalid_encryption_parameters',
        )
      }
      // The refused requests issued nothing: the session still issues, in clear.
      const plain = await send(
        'credential',
        accessToken,
        JSON.stringify(await credentialBody('pid')),
        'application/json',
      )
      expect(plain.status).toBe(200)
    })

    it('I-72 / OID4VCI §10: credential_response_encryption in a plain JSON request is invalid_encryption_parameters (parameter substitution)', async () => {
      const wallet = await walletKey()
      const { accessToken } = await f.redeem('pid')
      const body = {
        ...(await credentialBody('pid')),
        credential_response_encryption: { jwk: wallet.jwk, enc: 'A128GCM' },
      }
      await expectError(
        await send('credential', accessToken, JSON.stringify(body), 'application/json'),
        'invalid_encryption_parameters',
      )
    })

    it('S-67 / OID4VCI §10: a request encrypted to an unknown kid is 400; a zip bomb stops at our inflate cap, below jose’s default', async () => {
      const { accessToken } = await f.redeem('pid')
      const stranger = await generateKeyPair('ECDH-ES', { crv: 'P-256' })
      const toStranger = await encrypt(
        await credentialBody('pid'),
        {},
        { ...(await exportJWK(stranger.publicKey)), kid: 'not-ours' },
      )
      await expectError(
        await send('credential', accessToken, toStranger, 'application/jwt'),
        'invalid_encryption_parameters',
      )
      // 5 MB of spaces deflate to a few kilobytes, well under the body limit.
      const bomb = await encrypt(`{"credential_configuration_id":"pid"${' '.repeat(5_000_000)}}`, {
        zip: 'DEF',
      })
      expect(bomb.length).toBeLessThan(100_000)
      await expectError(
        await send('credential', accessToken, bomb, 'application/jwt'),
        'invalid_credential_request',
      )
      // Our cap is MAX_DECOMPRESSED_REQUEST_BYTES (100,000), jose's own default 250,000: a valid
      // request padded to 150,000 bytes is refused by ours alone; padded to 99,000 it is issued.
      const padded = async (length: number) => {
        const body = JSON.stringify(await credentialBody('pid'))
        return encrypt(`${body.slice(0, -1)}${' '.repeat(length - body.length)}}`, { zip: 'DEF' })
      }
      await expectError(
        await send('credential', accessToken, await padded(150_000), 'application/jwt'),
        'invalid_credential_request',
      )
      const within = await send('credential', accessToken, await padded(99_000), 'application/jwt')
      expect(within.status, await within.clone().text()).toBe(200)
    })

    it('I-60, I-69 / OID4VCI §8.2, §8.3.1.2: text/plain, form encoding, malformed or empty JSON, JSON with NUL, a lone surrogate or too deep nesting, a JSON array or a non-JWE application/jwt body are invalid_credential_request, never invalid_request', async () => {
      const { accessToken } = await f.redeem('pid')
      const body = JSON.stringify(await credentialBody('pid'))
      for (const [payload, type] of [
        [body, 'text/plain'],
        ['credential_configuration_id=pid', 'application/x-www-form-urlencoded'],
        ['{"credential_configuration_id":', 'application/json'],
        ['', 'application/json'],
        ['{"credential_configuration_id":"pid\\u0000"}', 'application/json'],
        ['{"credential_configuration_id":"pid\\ud800"}', 'application/json'],
        [`{"a":${'['.repeat(1000)}${']'.repeat(1000)}}`, 'application/json'],
        ['[]', 'application/json'],
        ['not.a.jwe', 'application/jwt'],
        [body, 'application/octet-stream'],
      ] as const) {
        await expectError(await send('credential', accessToken, payload, type), 'invalid_credential_request')
        await expectError(
          await send('deferred-credential', accessToken, payload, type),
          'invalid_credential_request',
        )
      }
      // S-12: a decrypted body gets the checks of a plain one (NUL, depth) before any use.
      const nul = await encrypt('{"credential_configuration_id":"pid\\u0000"}')
      await expectError(
        await send('credential', accessToken, nul, 'application/jwt'),
        'invalid_credential_request',
      )
      const deep = await encrypt(`{"a":${'['.repeat(1000)}${']'.repeat(1000)}}`)
      await expectError(
        await send('credential', accessToken, deep, 'application/jwt'),
        'invalid_credential_request',
      )
      // The nonce of those proofs was never consumed: the same body still issues.
      expect((await send('credential', accessToken, body, 'application/json')).status).toBe(200)
    })

    it('I-72 / I-11: a tenant with credentialEncryption "required" refuses plain requests and encrypted ones without response encryption, at both endpoints', async () => {
      const patched = await fetch(`${f.baseUrl}/api/tenants/${f.tenant}`, {
        method: 'PATCH',
        headers: { ...f.root, 'content-type': 'application/json' },
        body: JSON.stringify({ credentialEncryption: 'required' }),
      })
      expect(patched.status).toBe(200)
      expect(await patched.json()).toMatchObject({ credentialEncryption: 'required' })
      try {
        const required: Loose = await (
          await fetch(`${f.baseUrl}/.well-known/openid-credential-issuer/issuers/${f.tenant}`)
        ).json()
        expect(required.credential_response_encryption.encryption_required).toBe(true)
        expect(required.credential_request_encryption.encryption_required).toBe(true)
        const { accessToken } = await f.redeem('pid')
        const body = await credentialBody('pid')
        await expectError(
          await send('credential', accessToken, JSON.stringify(body), 'application/json'),
          'invalid_encryption_parameters',
        )
        await expectError(
          await send('credential', accessToken, await encrypt(body), 'application/jwt'),
          'invalid_encryption_parameters',
        )
        await expectError(
          await send(
            'deferred-credential',
            accessToken,
            JSON.stringify({ transaction_id: 'x' }),
            'application/json',
          ),
          'invalid_encryption_parameters',
        )
        const wallet = await walletKey()
        const sealed = await send(
          'credential',
          accessToken,
          await encrypt({ ...body, credential_response_encryption: { jwk: wallet.jwk, enc: 'A128GCM' } }),
          'application/jwt',
        )
        expect(sealed.status).toBe(200)
        expect((await decrypt(sealed, wallet.privateKey)).body.credentials).toHaveLength(1)
      } finally {
        await fetch(`${f.baseUrl}/api/tenants/${f.tenant}`, {
          method: 'PATCH',
          headers: { ...f.root, 'content-type': 'application/json' },
          body: JSON.stringify({ credentialEncryption: 'optional' }),
        })
      }
    })
  },
)
