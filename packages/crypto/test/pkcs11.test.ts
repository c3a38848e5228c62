import { spawn } from 'node:child_process'
import { createPublicKey, verify } from 'node:crypto'
import { base64url, compactVerify, importJWK, type JWK } from 'jose'
import { beforeAll, describe, expect, it } from 'vitest'
import { createJwkCipher } from '../src/jwk-cipher'
import { createSignerFactory, jwkContext } from '../src/key-chain-signer'
import { createPkcs11Provider } from '../src/providers/pkcs11'
import { loadModule } from '../src/providers/pkcs11-token'
import { hashFor, type SigningAlgorithm, signJws } from '../src/signer'
import {
  changeSoftHsmPin,
  createSoftHsmToken,
  dropSoftHsmSessions,
  type SoftHsmToken,
} from '../src/testing/softhsm'

const cipher = createJwkCipher('pkcs11-test-master-secret-0123456789abcdef')
const encoder = new TextEncoder()

const verifies = (jwk: JWK, alg: SigningAlgorithm, data: Uint8Array, signature: Uint8Array) =>
  verify(
    hashFor(alg),
    data,
    { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    signature,
  )

/** Runs pkcs11-signer-process.ts in a process of its own; resolves with its signatures. */
function signInProcess(token: SoftHsmToken, mode: 'sign' | 'generate', keyId: string, count: number) {
  return new Promise<Uint8Array[]>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'packages/crypto/test/pkcs11-signer-process.ts', mode, keyId, String(count)],
      {
        env: {
          ...process.env,
          SOFTHSM2_CONF: token.conf,
          PKCS11_MODULE: token.module,
          PKCS11_TOKEN_LABEL: token.tokenLabel,
          TEST_PKCS11_PIN: token.pin,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.stderr.on('data', (chunk) => {
      err += chunk
    })
    child.on('exit', (code) =>
      code === 0
        ? resolve(
            out
              .trim()
              .split('\n')
              .map((line) => base64url.decode(line)),
          )
        : reject(new Error(`signer process exited ${code}: ${err}`)),
    )
  })
}

describe('PKCS#11 provider (SoftHSM2)', () => {
  let token: SoftHsmToken
  const provider = () =>
    createPkcs11Provider({ module: token.module, tokenLabel: token.tokenLabel, pin: token.pin })
  beforeAll(async () => {
    token = await createSoftHsmToken()
  })

  for (const alg of ['ES256', 'ES384', 'EdDSA'] as const) {
    it(`${alg}: a key generated on the token signs a JWS that verifies with the published JWK`, async () => {
      const hsm = provider()
      const generated = await (hsm.generate as NonNullable<typeof hsm.generate>)(`issuer-${alg}`, alg)
      expect(generated.alg).toBe(alg)
      expect(await hsm.describe(`issuer-${alg}`)).toStrictEqual(generated)
      const signer = createSignerFactory({ cipher, providers: { pkcs11: hsm } })(
        {
          tenantId: 't',
          keyChainId: 'kc',
          kmsProvider: 'pkcs11',
          externalKeyId: `issuer-${alg}`,
          alg,
          kid: 'k1',
          encryptedJwk: cipher.encrypt(generated.publicJwk, jwkContext('t', 'kc')),
          x5c: [],
        },
        generated.publicJwk,
      )
      const jws = await signJws(signer, { typ: 'JWT', kid: 'k1' }, { hello: 'hsm' })
      const { payload, protectedHeader } = await compactVerify(jws, await importJWK(generated.publicJwk, alg))
      expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual({ hello: 'hsm' })
      expect(protectedHeader).toStrictEqual({ typ: 'JWT', kid: 'k1', alg })
      await hsm.close()
    })
  }

  it('the private key is a token object, sensitive and not extractable: its value cannot be read', async () => {
    const hsm = provider()
    await (hsm.generate as NonNullable<typeof hsm.generate>)('sealed', 'ES256')
    const { binding, pkcs11 } = await loadModule(token.module)
    const slot = pkcs11
      .C_GetSlotList(true)
      .find((s) => pkcs11.C_GetTokenInfo(s).label.trim() === token.tokenLabel)
    const session = pkcs11.C_OpenSession(slot as Buffer, binding.CKF_SERIAL_SESSION)
    try {
      pkcs11.C_FindObjectsInit(session, [
        { type: binding.CKA_CLASS, value: binding.CKO_PRIVATE_KEY },
        { type: binding.CKA_LABEL, value: 'sealed' },
      ])
      const [key] = pkcs11.C_FindObjects(session, 1)
      pkcs11.C_FindObjectsFinal(session)
      const [extractable, sensitive, onToken] = pkcs11.C_GetAttributeValue(session, key as Buffer, [
        { type: binding.CKA_EXTRACTABLE },
        { type: binding.CKA_SENSITIVE },
        { type: binding.CKA_TOKEN },
      ])
      expect(
        [extractable?.value, sensitive?.value, onToken?.value].map((v) => (v as Buffer)[0]),
      ).toStrictEqual([0, 1, 1])
      expect(() => pkcs11.C_GetAttributeValue(session, key as Buffer, [{ type: binding.CKA_VALUE }])).toThrow(
        /CKR_ATTRIBUTE_SENSITIVE/,
      )
    } finally {
      pkcs11.C_CloseSession(session)
    }
    await hsm.close()
  })

  it('a restarted provider finds the key again by its label, and by its CKA_ID (id:<hex>)', async () => {
    const first = provider()
    const generated = await (first.generate as NonNullable<typeof first.generate>)('survivor', 'ES256')
    await first.close()
    const { binding, pkcs11 } = await loadModule(token.module)
    const slot = pkcs11
      .C_GetSlotList(true)
      .find((s) => pkcs11.C_GetTokenInfo(s).label.trim() === token.tokenLabel)
    const session = pkcs11.C_OpenSession(slot as Buffer, binding.CKF_SERIAL_SESSION)
    pkcs11.C_FindObjectsInit(session, [{ type: binding.CKA_LABEL, value: 'survivor' }])
    const [object] = pkcs11.C_FindObjects(session, 1)
    pkcs11.C_FindObjectsFinal(session)
    const [id] = pkcs11.C_GetAttributeValue(session, object as Buffer, [{ type: binding.CKA_ID }])
    pkcs11.C_CloseSession(session)

    const again = provider()
    for (const name of ['survivor', `id:${(id as { value: Buffer }).value.toString('hex')}`]) {
      expect(await again.describe(name)).toStrictEqual(generated)
      const data = encoder.encode(name)
      expect(verifies(generated.publicJwk, 'ES256', data, await again.sign(name, 'ES256', data))).toBe(true)
    }
    await again.close()
  })

  it('two processes sign with the same token key at once, and one finds a key the other made', async () => {
    const hsm = provider()
    const shared = await (hsm.generate as NonNullable<typeof hsm.generate>)('shared', 'ES256')
    const [a, b] = await Promise.all([
      signInProcess(token, 'sign', 'shared', 12),
      signInProcess(token, 'generate', 'made-elsewhere', 12),
    ])
    a.forEach((signature, i) => {
      expect(verifies(shared.publicJwk, 'ES256', encoder.encode(`message ${i}`), signature)).toBe(true)
    })
    const elsewhere = await hsm.describe('made-elsewhere')
    b.forEach((signature, i) => {
      expect(verifies(elsewhere.publicJwk, 'ES256', encoder.encode(`message ${i}`), signature)).toBe(true)
    })
    await hsm.close()
  }, 60_000)

  it('more concurrent signatures than pooled sessions wait for a session and all verify', async () => {
    const hsm = createPkcs11Provider({ ...token, sessions: 2 })
    const key = await (hsm.generate as NonNullable<typeof hsm.generate>)('pooled', 'ES384')
    const data = Array.from({ length: 25 }, (_, i) => encoder.encode(`pooled ${i}`))
    const signatures = await Promise.all(data.map((bytes) => hsm.sign('pooled', 'ES384', bytes)))
    signatures.forEach((signature, i) => {
      expect(verifies(key.publicJwk, 'ES384', data[i] as Uint8Array, signature)).toBe(true)
    })
    await hsm.close()
  })

  it('sessions the token dropped are replaced: the signature is made again on a fresh session', async () => {
    const hsm = provider()
    const key = await (hsm.generate as NonNullable<typeof hsm.generate>)('dropped', 'ES256')
    const first = encoder.encode('before')
    expect(verifies(key.publicJwk, 'ES256', first, await hsm.sign('dropped', 'ES256', first))).toBe(true)
    // What a token reset or a network HSM's failover does to an application's sessions.
    await dropSoftHsmSessions(token)
    const data = encoder.encode('after')
    expect(verifies(key.publicJwk, 'ES256', data, await hsm.sign('dropped', 'ES256', data))).toBe(true)
    await hsm.close()
  })

  it('a token that refuses the login once its sessions dropped is misconfigured, until it accepts it again', async () => {
    const own = await createSoftHsmToken()
    const hsm = createPkcs11Provider(own)
    const key = await (hsm.generate as NonNullable<typeof hsm.generate>)('relogin', 'ES256')
    await changeSoftHsmPin(own, own.pin, 'changed-elsewhere')
    const failure = await hsm.sign('relogin', 'ES256', encoder.encode('x')).catch((error) => error)
    expect([failure.reason, failure.message]).toStrictEqual([
      'misconfigured',
      `PKCS#11 token '${own.tokenLabel}': login refused (CKR_PIN_INCORRECT)`,
    ])
    await changeSoftHsmPin(own, 'changed-elsewhere', own.pin)
    const data = encoder.encode('back')
    expect(verifies(key.publicJwk, 'ES256', data, await hsm.sign('relogin', 'ES256', data))).toBe(true)
    await hsm.close()
  })

  it('an unknown key is not_found; a missing module, a missing token and a wrong PIN are misconfigured, the PIN never shown', async () => {
    const notFound = await provider()
      .describe('no-such-key')
      .catch((error) => error)
    expect([notFound.reason, notFound.message]).toStrictEqual([
      'not_found',
      `PKCS#11 token '${token.tokenLabel}' key 'no-such-key': not found`,
    ])
    // A token this process never logged in to: the login state belongs to the application (§5.1).
    const untouched = await createSoftHsmToken()
    const attempts = [
      { ...token, module: '/nonexistent/libpkcs11.so' },
      { ...token, tokenLabel: 'no-such-token' },
      { ...untouched, pin: 'wrong-pin-31337' },
    ]
    const failures = await Promise.all(
      attempts.map((options) =>
        createPkcs11Provider(options)
          .check?.()
          .then(
            () => undefined,
            (error) => error,
          ),
      ),
    )
    expect(failures.map((error) => [error?.reason, error?.message])).toStrictEqual([
      ['misconfigured', `PKCS#11 module '/nonexistent/libpkcs11.so' cannot be loaded`],
      ['misconfigured', `PKCS#11 token 'no-such-token' is not present in module '${token.module}'`],
      ['misconfigured', `PKCS#11 token '${untouched.tokenLabel}': login refused (CKR_PIN_INCORRECT)`],
    ])
    for (const error of failures) {
      expect(`${error.message} ${JSON.stringify(error)} ${error.cause ?? ''}`).not.toContain(untouched.pin)
      expect(`${error.message}`).not.toContain('wrong-pin')
    }
  })
})
