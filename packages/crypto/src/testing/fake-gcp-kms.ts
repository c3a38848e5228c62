import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { p256, p384 } from '@noble/curves/nist.js'
import { jwtVerify } from 'jose'
import { crc32c } from '../providers/gcp-kms'
import { type GeneratedKey, generateTestKey } from './test-keys'

/**
 * A local stand-in for Cloud KMS's REST API (v1) and Google's OAuth token endpoint: a service
 * account's JWT assertion (RFC 7523, RS256, verified with the account's key) buys a bearer token;
 * `GET /v1/{version}/publicKey` answers the PEM with `pemCrc32c`; `POST /v1/{version}:asymmetricSign`
 * checks `digestCrc32c` and answers a DER signature with `signatureCrc32c`;
 * `POST /v1/{keyRing}/cryptoKeys?cryptoKeyId=` makes an ASYMMETRIC_SIGN key and its version 1,
 * PENDING_GENERATION at its first read (as an HSM key can be) and ENABLED after. Errors in Google's
 * `{ error: { code, message, status } }` shape. `serviceAccount` is the key file the test uses.
 */
export async function startFakeGcpKms() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const keys = new Map<string, GeneratedKey & { enabled: boolean; pending?: boolean }>()
  const created: { name: string; purpose: string; algorithm: string; protectionLevel: string }[] = []
  const tokens = new Set<string>()
  const requests: { method: string; path: string; body: unknown }[] = []
  let origin = ''
  const clientEmail = 'issuer@test-project.iam.gserviceaccount.com'

  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk) => {
      raw += chunk
    })
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://localhost')
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(json))
      }
      const error = (code: number, status: string, message: string) =>
        send(code, { error: { code, message, status } })
      if (url.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(raw)
        requests.push({ method: 'POST', path: url.pathname, body: { grant_type: form.get('grant_type') } })
        try {
          const { payload } = await jwtVerify(form.get('assertion') ?? '', publicKey, {
            issuer: clientEmail,
            audience: `${origin}/token`,
          })
          if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
            throw new Error('grant')
          if (payload.scope !== 'https://www.googleapis.com/auth/cloudkms') throw new Error('scope')
        } catch {
          return send(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' })
        }
        const token = randomBytes(16).toString('hex')
        tokens.add(token)
        return send(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' })
      }
      const body = raw ? JSON.parse(raw) : undefined
      requests.push({ method: req.method ?? '', path: url.pathname, body })
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
      if (!bearer || !tokens.has(bearer)) {
        return error(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.')
      }
      const ring = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+)\/cryptoKeys$/.exec(
        url.pathname,
      )
      if (ring && req.method === 'POST') {
        const id = url.searchParams.get('cryptoKeyId') ?? ''
        const { purpose, versionTemplate } = (body ?? {}) as {
          purpose?: string
          versionTemplate?: { algorithm?: string; protectionLevel?: string }
        }
        const algorithm = versionTemplate?.algorithm ?? ''
        if (!/^[a-zA-Z0-9_-]{1,63}$/.test(id)) return error(400, 'INVALID_ARGUMENT', 'Invalid cryptoKeyId.')
        if (
          purpose !== 'ASYMMETRIC_SIGN' ||
          !['EC_SIGN_P256_SHA256', 'EC_SIGN_P384_SHA384'].includes(algorithm)
        )
          return error(400, 'INVALID_ARGUMENT', 'Algorithm must be compatible with purpose.')
        const name = `${ring[1]}/cryptoKeys/${id}`
        if (keys.has(`${name}/cryptoKeyVersions/1`))
          return error(409, 'ALREADY_EXISTS', `CryptoKey ${name} already exists.`)
        const protectionLevel = versionTemplate?.protectionLevel ?? 'SOFTWARE'
        created.push({ name, purpose, algorithm, protectionLevel })
        const key = await generateTestKey(algorithm === 'EC_SIGN_P256_SHA256' ? 'ES256' : 'ES384')
        keys.set(`${name}/cryptoKeyVersions/1`, { ...key, enabled: true, pending: true })
        return send(200, { name, purpose, versionTemplate: { algorithm, protectionLevel } })
      }
      const match = /^\/v1\/(.+?)(\/publicKey|:asymmetricSign)$/.exec(url.pathname)
      const key = match ? keys.get(match[1] as string) : undefined
      if (!match) return error(404, 'NOT_FOUND', 'Method not found.')
      if (!key) return error(404, 'NOT_FOUND', `CryptoKeyVersion ${match[1]} not found.`)
      if (key.pending) {
        key.pending = false
        return error(
          400,
          'FAILED_PRECONDITION',
          `${match[1]} is not enabled, current state is: PENDING_GENERATION.`,
        )
      }
      if (!key.enabled)
        return error(400, 'FAILED_PRECONDITION', `${match[1]} is not enabled, current state is: DISABLED.`)
      const algorithm = key.alg === 'ES256' ? 'EC_SIGN_P256_SHA256' : 'EC_SIGN_P384_SHA384'
      if (match[2] === '/publicKey' && req.method === 'GET') {
        return send(200, {
          pem: key.publicPem,
          algorithm,
          pemCrc32c: String(crc32c(Buffer.from(key.publicPem))),
          name: match[1],
          protectionLevel: 'HSM',
        })
      }
      if (match[2] === ':asymmetricSign' && req.method === 'POST') {
        const hash = key.alg === 'ES256' ? 'sha256' : 'sha384'
        const { digest, digestCrc32c } = (body ?? {}) as {
          digest?: Record<string, string>
          digestCrc32c?: string
        }
        const value = digest?.[hash]
        if (!value) return error(400, 'INVALID_ARGUMENT', `The request digest must be ${hash}.`)
        const bytes = Buffer.from(value, 'base64')
        if (digestCrc32c !== undefined && Number(digestCrc32c) !== crc32c(bytes)) {
          return error(400, 'INVALID_ARGUMENT', 'The checksum in field digest_crc32c did not match the data.')
        }
        const curve = key.alg === 'ES256' ? p256 : p384
        const signature = Buffer.from(curve.sign(bytes, key.secret, { prehash: false, format: 'der' }))
        return send(200, {
          signature: signature.toString('base64'),
          signatureCrc32c: String(crc32c(signature)),
          verifiedDigestCrc32c: digestCrc32c !== undefined,
          name: match[1],
          protectionLevel: 'HSM',
        })
      }
      return error(405, 'UNIMPLEMENTED', 'unsupported operation')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  origin = `http://127.0.0.1:${port}`

  return {
    /** The Cloud KMS endpoint. */
    endpoint: origin,
    serviceAccount: {
      client_email: clientEmail,
      private_key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      token_uri: `${origin}/token`,
    },
    requests,
    /** The keys `cryptoKeys.create` made. */
    created,
    /** A key version named `name` (a resource name …/cryptoKeyVersions/N). */
    async addKey(name: string, alg: 'ES256' | 'ES384' = 'ES256') {
      const key = await generateTestKey(alg)
      keys.set(name, { ...key, enabled: true })
      return key
    },
    disable(name: string) {
      const key = keys.get(name)
      if (key) key.enabled = false
    },
    expireTokens: () => tokens.clear(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
