import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { p256, p384 } from '@noble/curves/nist.js'
import { base64url } from 'jose'
import { type GeneratedKey, generateTestKey } from './test-keys'

/**
 * A local stand-in for Vault's transit engine wire protocol: `GET /v1/transit/keys/{name}` and
 * `POST /v1/transit/sign/{name}` (prehashed digest, `marshaling_algorithm: jws`), with token
 * checks and Vault's `{ errors: [...] }` answers. It holds its keys and signs with them.
 */
export async function startFakeVault(token: string) {
  const keys = new Map<string, GeneratedKey>()
  const requests: { method: string; url: string; body: unknown }[] = []

  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk) => {
      raw += chunk
    })
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : undefined
      requests.push({ method: req.method ?? '', url: req.url ?? '', body })
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(json))
      }
      if (req.headers['x-vault-token'] !== token) return send(403, { errors: ['permission denied'] })
      const match = /^\/v1\/transit\/(keys|sign)\/([^/]+)$/.exec(req.url ?? '')
      const key = match?.[2] ? keys.get(decodeURIComponent(match[2])) : undefined
      if (!match) return send(404, { errors: [] })
      if (!key) return send(match[1] === 'keys' ? 404 : 400, { errors: [`encryption key not found`] })
      if (match[1] === 'keys' && req.method === 'GET') {
        return send(200, {
          data: {
            type: key.alg === 'ES256' ? 'ecdsa-p256' : 'ecdsa-p384',
            latest_version: 1,
            keys: { '1': { public_key: key.publicPem, name: key.alg === 'ES256' ? 'P-256' : 'P-384' } },
          },
        })
      }
      if (match[1] === 'sign' && req.method === 'POST') {
        const { input, prehashed, marshaling_algorithm } = body as Record<string, unknown>
        if (prehashed !== true || marshaling_algorithm !== 'jws')
          return send(400, { errors: ['unsupported request'] })
        const curve = key.alg === 'ES256' ? p256 : p384
        const signature = curve.sign(Buffer.from(String(input), 'base64'), key.secret, { prehash: false })
        return send(200, { data: { signature: `vault:v1:${base64url.encode(signature)}`, key_version: 1 } })
      }
      return send(405, { errors: ['unsupported operation'] })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    address: `http://127.0.0.1:${port}`,
    requests,
    async addKey(name: string, alg: 'ES256' | 'ES384' = 'ES256') {
      const key = await generateTestKey(alg)
      keys.set(name, key)
      return key
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
