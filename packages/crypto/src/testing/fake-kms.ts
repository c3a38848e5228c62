import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { p256, p384 } from '@noble/curves/nist.js'
import { type GeneratedKey, generateTestKey } from './test-keys'

/**
 * A local stand-in for the AWS KMS JSON 1.1 protocol (`X-Amz-Target: TrentService.*`) for
 * `GetPublicKey` and `Sign` with `MessageType: DIGEST`, answering AWS-shaped errors
 * (`__type` + `x-amzn-errortype`). Requires a SigV4 Authorization header.
 */
export async function startFakeKms() {
  const keys = new Map<string, GeneratedKey>()
  const calls: string[] = []

  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk) => {
      raw += chunk
    })
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '')
      calls.push(target)
      const send = (status: number, json: unknown, errorType?: string) => {
        res.writeHead(status, {
          'content-type': 'application/x-amz-json-1.1',
          ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
        })
        res.end(JSON.stringify(json))
      }
      const fail = (type: string, message: string) => send(400, { __type: type, message }, type)
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ')) {
        return fail('UnrecognizedClientException', 'The security token included in the request is invalid.')
      }
      const body = JSON.parse(raw || '{}') as Record<string, string>
      const key = keys.get(body.KeyId ?? '')
      if (!key) return fail('NotFoundException', `Key '${body.KeyId}' does not exist`)
      if (target === 'TrentService.GetPublicKey') {
        return send(200, {
          KeyId: body.KeyId,
          PublicKey: key.spkiDer.toString('base64'),
          KeySpec: key.alg === 'ES256' ? 'ECC_NIST_P256' : 'ECC_NIST_P384',
          KeyUsage: 'SIGN_VERIFY',
          SigningAlgorithms: [key.alg === 'ES256' ? 'ECDSA_SHA_256' : 'ECDSA_SHA_384'],
        })
      }
      if (target === 'TrentService.Sign') {
        if (body.MessageType !== 'DIGEST') return fail('ValidationException', 'only DIGEST is supported here')
        const curve = key.alg === 'ES256' ? p256 : p384
        const der = curve.sign(Buffer.from(body.Message ?? '', 'base64'), key.secret, {
          prehash: false,
          format: 'der',
        })
        return send(200, {
          KeyId: body.KeyId,
          Signature: Buffer.from(der).toString('base64'),
          SigningAlgorithm: body.SigningAlgorithm,
        })
      }
      return fail('UnknownOperationException', target)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    async addKey(keyId: string, alg: 'ES256' | 'ES384' = 'ES256') {
      const key = await generateTestKey(alg)
      keys.set(keyId, key)
      return key
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
