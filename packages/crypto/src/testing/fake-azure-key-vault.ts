import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { p256, p384 } from '@noble/curves/nist.js'
import { base64url } from 'jose'
import { type GeneratedKey, generateTestKey } from './test-keys'

/**
 * A local stand-in for Azure Key Vault's keys REST API (api-version 7.4) and the Microsoft Entra
 * token endpoint that guards it: `POST /{tenant}/oauth2/v2.0/token` (client credentials, scope
 * `https://vault.azure.net/.default`), `GET /keys/{name}[/{version}]` and
 * `POST /keys/{name}/{version}/sign` (an empty version is the current one) and
 * `POST /keys/{name}/create` (Create Key: EC or EC-HSM, P-256 or P-384; an exportable key needs a
 * release policy) and `PUT /keys/{name}` (Import Key: a private EC JWK, `Hsm` for an HSM key, a new
 * version when the name exists), with bearer checks and Azure's `{ error: { code, message } }`
 * answers. Keys have versions; `rotate` adds one; `created` and `imported` list what Create Key and
 * Import Key were asked for (never the private key).
 */
export async function startFakeAzureKeyVault(
  credentials: { tenantId: string; clientId: string; clientSecret: string },
  /** `standard` vaults refuse hardware (HSM) keys, as Azure does (403 Forbidden). */
  sku: 'premium' | 'standard' = 'premium',
) {
  const keys = new Map<string, Array<{ version: string; key: GeneratedKey }>>()
  const tokens = new Set<string>()
  const requests: { method: string; path: string; body: unknown }[] = []
  const created: { name: string; kty: string; crv: string; exportable: boolean }[] = []
  const imported: { name: string; hsm: boolean; crv: string; exportable: boolean }[] = []
  let origin = ''

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
      const error = (status: number, code: string, message: string) =>
        send(status, { error: { code, message } })
      if (url.pathname === `/${credentials.tenantId}/oauth2/v2.0/token` && req.method === 'POST') {
        const form = new URLSearchParams(raw)
        requests.push({
          method: 'POST',
          path: url.pathname,
          body: { ...Object.fromEntries(form), client_secret: '…' },
        })
        if (
          form.get('client_id') !== credentials.clientId ||
          form.get('client_secret') !== credentials.clientSecret
        ) {
          return send(401, {
            error: 'invalid_client',
            error_description: 'AADSTS7000215: Invalid client secret provided.',
          })
        }
        if (
          form.get('grant_type') !== 'client_credentials' ||
          form.get('scope') !== 'https://vault.azure.net/.default'
        ) {
          return send(400, { error: 'invalid_request', error_description: 'AADSTS900144' })
        }
        const token = randomBytes(16).toString('hex')
        tokens.add(token)
        return send(200, { token_type: 'Bearer', expires_in: 3599, access_token: token })
      }
      const body = raw ? JSON.parse(raw) : undefined
      requests.push({ method: req.method ?? '', path: url.pathname, body })
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
      if (!bearer || !tokens.has(bearer)) {
        res.setHeader(
          'www-authenticate',
          `Bearer authorization="${origin}/${credentials.tenantId}", resource="https://vault.azure.net"`,
        )
        return error(401, 'Unauthorized', 'AKV10000: Request is missing a Bearer or PoP token.')
      }
      if (url.searchParams.get('api-version') !== '7.4') return error(400, 'BadParameter', 'api-version')
      const match = /^\/keys\/([^/]+)(?:\/([^/]*))?(\/sign)?$/.exec(url.pathname)
      if (!match) return error(404, 'NotFound', 'no such operation')
      const [, name, version, sign] = match as unknown as [
        string,
        string,
        string | undefined,
        string | undefined,
      ]
      if (version === 'create' && !sign && req.method === 'POST') {
        const { kty, crv, key_ops, attributes, release_policy } = (body ?? {}) as {
          kty?: string
          crv?: string
          key_ops?: string[]
          attributes?: { exportable?: boolean }
          release_policy?: unknown
        }
        if (!/^[0-9a-zA-Z-]{1,127}$/.test(name))
          return error(400, 'BadParameter', 'The request URI contains an invalid name')
        if (!['EC', 'EC-HSM'].includes(kty ?? '') || !['P-256', 'P-384'].includes(crv ?? ''))
          return error(400, 'BadParameter', 'Invalid kty or crv for this operation.')
        if (attributes?.exportable && !release_policy)
          return error(400, 'BadParameter', 'Exportable keys must have a release policy.')
        if (kty === 'EC-HSM' && sku === 'standard') return hardwareRefused()
        created.push({
          name,
          kty: kty as string,
          crv: crv as string,
          exportable: Boolean(attributes?.exportable),
        })
        const made = await rotate(name, crv === 'P-256' ? 'ES256' : 'ES384')
        return send(200, {
          key: {
            kid: `${origin}/keys/${name}/${made.version}`,
            kty,
            key_ops: key_ops ?? ['sign', 'verify'],
            ...made.publicJwk,
          },
          attributes: { enabled: true, exportable: false, recoveryLevel: 'Recoverable+Purgeable' },
        })
      }
      if (version === undefined && req.method === 'PUT') return importKey(name, body)
      const versions = keys.get(name) ?? []
      const held = version ? versions.find((v) => v.version === version) : versions.at(-1)
      if (!held) {
        return error(404, 'KeyNotFound', `A key with (name/id) ${name} was not found in this key vault.`)
      }
      const kid = `${origin}/keys/${name}/${held.version}`
      if (!sign && req.method === 'GET') {
        return send(200, {
          key: { kid, kty: 'EC-HSM', key_ops: ['sign', 'verify'], ...held.key.publicJwk },
          attributes: { enabled: true, recoveryLevel: 'Recoverable+Purgeable' },
        })
      }
      if (sign && req.method === 'POST') {
        const { alg, value } = (body ?? {}) as { alg?: string; value?: string }
        if (alg !== held.key.alg || !value) return error(400, 'BadParameter', 'Invalid algorithm or value.')
        const curve = held.key.alg === 'ES256' ? p256 : p384
        const signature = curve.sign(base64url.decode(value), held.key.secret, { prehash: false })
        return send(200, { kid, value: base64url.encode(signature) })
      }
      return error(405, 'MethodNotAllowed', 'unsupported operation')

      function hardwareRefused() {
        return error(403, 'Forbidden', 'Hardware key operation not allowed on standard vault')
      }

      /** Import Key: the JWK must be a whole private EC key whose d belongs to its x and y. */
      function importKey(name: string, request: unknown) {
        const {
          key,
          Hsm: hsm,
          attributes,
          release_policy,
        } = (request ?? {}) as {
          key?: Record<string, unknown>
          Hsm?: boolean
          attributes?: { exportable?: boolean }
          release_policy?: unknown
        }
        if (!/^[0-9a-zA-Z-]{1,127}$/.test(name))
          return error(400, 'BadParameter', 'The request URI contains an invalid name')
        if (!key || typeof key !== 'object') return error(400, 'BadParameter', 'Property key is required.')
        const { kty, crv, x, y, d } = key as Record<string, string | undefined>
        if (!['EC', 'EC-HSM'].includes(kty ?? '') || !['P-256', 'P-384'].includes(crv ?? ''))
          return error(400, 'BadParameter', 'Invalid kty or crv for this operation.')
        if (!d) return error(400, 'BadParameter', 'Key import requires the private key (d).')
        const size = crv === 'P-256' ? 32 : 48
        let point: Uint8Array
        try {
          // Uncompressed: 0x04 ‖ x ‖ y.
          point = (crv === 'P-256' ? p256 : p384).getPublicKey(base64url.decode(d), false)
        } catch {
          return error(400, 'BadParameter', 'The private key is not valid for the curve.')
        }
        const publicJwk = {
          kty: 'EC',
          crv: crv as string,
          x: base64url.encode(point.subarray(1, 1 + size)),
          y: base64url.encode(point.subarray(1 + size)),
        }
        if ((x && x !== publicJwk.x) || (y && y !== publicJwk.y))
          return error(400, 'BadParameter', 'The public key does not match the private key.')
        if (attributes?.exportable && !release_policy)
          return error(400, 'BadParameter', 'Exportable keys must have a release policy.')
        if ((hsm || kty === 'EC-HSM') && sku === 'standard') return hardwareRefused()
        const alg = crv === 'P-256' ? ('ES256' as const) : ('ES384' as const)
        const secret = base64url.decode(d)
        const held = {
          version: randomBytes(16).toString('hex'),
          key: { alg, secret, publicJwk, publicPem: '', spkiDer: Buffer.alloc(0) } satisfies GeneratedKey,
        }
        keys.set(name, [...(keys.get(name) ?? []), held])
        imported.push({
          name,
          hsm: Boolean(hsm || kty === 'EC-HSM'),
          crv: crv as string,
          exportable: Boolean(attributes?.exportable),
        })
        return send(200, {
          key: {
            ...publicJwk,
            kid: `${origin}/keys/${name}/${held.version}`,
            kty: hsm || kty === 'EC-HSM' ? 'EC-HSM' : 'EC',
            key_ops: (key.key_ops as string[] | undefined) ?? ['sign', 'verify'],
          },
          attributes: { enabled: true, exportable: false, recoveryLevel: 'Recoverable+Purgeable' },
        })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  origin = `http://127.0.0.1:${port}`

  /** A new version of `name` (the key's first when it has none). */
  async function rotate(name: string, alg: 'ES256' | 'ES384' = 'ES256') {
    const key = await generateTestKey(alg)
    const version = randomBytes(16).toString('hex')
    keys.set(name, [...(keys.get(name) ?? []), { version, key }])
    return { version, ...key }
  }

  return {
    /** Both the vault URL and the token authority. */
    url: origin,
    requests,
    created,
    imported,
    addKey: rotate,
    rotate,
    /** Every token issued so far stops working, as when it expires. */
    expireTokens: () => tokens.clear(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
