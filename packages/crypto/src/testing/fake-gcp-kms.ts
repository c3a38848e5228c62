import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { p256, p384 } from '@noble/curves/nist.js'
import { base64url, type JWK, jwtVerify } from 'jose'
import { crc32c } from '../providers/gcp-kms'
import {
  type FakeImportJob,
  importJobResource,
  isImportMethod,
  newImportJob,
  unwrapImport,
  wrappedShapeOk,
} from './fake-gcp-kms-import'
import { type GeneratedKey, generateTestKey } from './test-keys'

/**
 * A local stand-in for Cloud KMS's REST API (v1) and Google's OAuth token endpoint: a service
 * account's JWT assertion (RFC 7523, RS256, verified with the account's key) buys a bearer token;
 * `GET /v1/{version}/publicKey` answers the PEM with `pemCrc32c`; `POST /v1/{version}:asymmetricSign`
 * checks `digestCrc32c` and answers a DER signature with `signatureCrc32c`;
 * `POST /v1/{keyRing}/cryptoKeys?cryptoKeyId=` makes an ASYMMETRIC_SIGN key and its version 1
 * (none with `skipInitialVersionCreation=true`, which `importOnly` needs); `GET /v1/{version}`
 * answers its state, PENDING_GENERATION or PENDING_IMPORT at the first read and settled after.
 * Import: `POST /v1/{keyRing}/importJobs?importJobId=` makes an import job whose RSA wrapping key
 * is generated in the background (`GET` it until ACTIVE), and
 * `POST /v1/{cryptoKey}/cryptoKeyVersions:import` checks the request's shape at once, then unwraps
 * `wrappedKey` with the job's private key: a version ENABLED, or IMPORT_FAILED with its
 * `importFailureReason`. Errors in Google's `{ error: { code, message, status } }` shape.
 * `serviceAccount` is the key file the test uses.
 */
export async function startFakeGcpKms() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  /** Key versions by resource name; `settles` is the state a PENDING_ one takes after its first read. */
  const versions = new Map<string, Version>()
  const cryptoKeys = new Map<string, { algorithm: string; protectionLevel: string; last: number }>()
  const importJobs = new Map<string, FakeImportJob>()
  const created: {
    name: string
    purpose: string
    algorithm: string
    protectionLevel: string
    importOnly: boolean
  }[] = []
  const imported: { name: string; algorithm: string; importJob: string; importMethod: string }[] = []
  const tokens = new Set<string>()
  const requests: { method: string; path: string; body: unknown }[] = []
  let origin = ''
  const clientEmail = 'issuer@test-project.iam.gserviceaccount.com'
  const SIGN_ALGORITHMS = ['EC_SIGN_P256_SHA256', 'EC_SIGN_P384_SHA384']

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
      let body: Record<string, unknown> | undefined
      try {
        body = raw ? JSON.parse(raw) : undefined
      } catch {
        return error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.')
      }
      // The wrapped key is recorded by its length only.
      const logged =
        typeof body?.wrappedKey === 'string' ? { ...body, wrappedKey: `<${body.wrappedKey.length}>` } : body
      requests.push({ method: req.method ?? '', path: url.pathname, body: logged })
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
      if (!bearer || !tokens.has(bearer)) {
        return error(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.')
      }
      const ring =
        /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+)\/(cryptoKeys|importJobs)$/.exec(
          url.pathname,
        )
      if (ring?.[2] === 'cryptoKeys' && req.method === 'POST') return createCryptoKey(ring[1] as string)
      if (ring?.[2] === 'importJobs' && req.method === 'POST') return createImportJob(ring[1] as string)
      const jobName = /^\/v1\/(projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/importJobs\/[^/]+)$/.exec(
        url.pathname,
      )?.[1]
      if (jobName && req.method === 'GET') {
        const job = importJobs.get(jobName)
        return job
          ? send(200, importJobResource(job))
          : error(404, 'NOT_FOUND', `ImportJob ${jobName} not found.`)
      }
      const importInto = /^\/v1\/(.+\/cryptoKeys\/[^/]+)\/cryptoKeyVersions:import$/.exec(url.pathname)?.[1]
      if (importInto && req.method === 'POST') return importVersion(importInto)
      const match = /^\/v1\/(.+?\/cryptoKeyVersions\/[^/:]+)(\/publicKey|:asymmetricSign)?$/.exec(
        url.pathname,
      )
      if (!match) return error(404, 'NOT_FOUND', 'Method not found.')
      const name = match[1] as string
      const held = versions.get(name)
      if (!held) return error(404, 'NOT_FOUND', `CryptoKeyVersion ${name} not found.`)
      if (match[2] === undefined && req.method === 'GET') {
        const answer = {
          name,
          state: held.state,
          algorithm: held.algorithm,
          protectionLevel: 'HSM',
          ...(held.importJob ? { importJob: held.importJob } : {}),
          ...(held.importFailureReason ? { importFailureReason: held.importFailureReason } : {}),
        }
        if (held.settles) Object.assign(held, held.settles, { settles: undefined })
        return send(200, answer)
      }
      const key = held.key
      if (held.state !== 'ENABLED' || !key)
        return error(400, 'FAILED_PRECONDITION', `${name} is not enabled, current state is: ${held.state}.`)
      if (match[2] === '/publicKey' && req.method === 'GET') {
        return send(200, {
          pem: key.publicPem,
          algorithm: held.algorithm,
          pemCrc32c: String(crc32c(Buffer.from(key.publicPem))),
          name,
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
          name,
          protectionLevel: 'HSM',
        })
      }
      return error(405, 'UNIMPLEMENTED', 'unsupported operation')

      /** cryptoKeys.create: an ASYMMETRIC_SIGN key, with its version 1 unless skipped. */
      async function createCryptoKey(keyRing: string) {
        const id = url.searchParams.get('cryptoKeyId') ?? ''
        const skip = url.searchParams.get('skipInitialVersionCreation') === 'true'
        const { purpose, versionTemplate, importOnly } = (body ?? {}) as {
          purpose?: string
          importOnly?: boolean
          versionTemplate?: { algorithm?: string; protectionLevel?: string }
        }
        const algorithm = versionTemplate?.algorithm ?? ''
        if (!/^[a-zA-Z0-9_-]{1,63}$/.test(id)) return error(400, 'INVALID_ARGUMENT', 'Invalid cryptoKeyId.')
        if (purpose !== 'ASYMMETRIC_SIGN' || !SIGN_ALGORITHMS.includes(algorithm))
          return error(400, 'INVALID_ARGUMENT', 'Algorithm must be compatible with purpose.')
        if (importOnly && !skip)
          return error(
            400,
            'INVALID_ARGUMENT',
            'Import-only keys must be created with skip_initial_version_creation.',
          )
        const name = `${keyRing}/cryptoKeys/${id}`
        if (cryptoKeys.has(name)) return error(409, 'ALREADY_EXISTS', `CryptoKey ${name} already exists.`)
        const protectionLevel = versionTemplate?.protectionLevel ?? 'SOFTWARE'
        created.push({ name, purpose, algorithm, protectionLevel, importOnly: Boolean(importOnly) })
        cryptoKeys.set(name, { algorithm, protectionLevel, last: skip ? 0 : 1 })
        if (!skip) {
          const key = await generateTestKey(algorithm === 'EC_SIGN_P256_SHA256' ? 'ES256' : 'ES384')
          versions.set(`${name}/cryptoKeyVersions/1`, {
            algorithm,
            key,
            state: 'PENDING_GENERATION',
            settles: { state: 'ENABLED' },
          })
        }
        return send(200, {
          name,
          purpose,
          importOnly: Boolean(importOnly),
          versionTemplate: { algorithm, protectionLevel },
        })
      }

      function createImportJob(keyRing: string) {
        const id = url.searchParams.get('importJobId') ?? ''
        const { importMethod, protectionLevel } = (body ?? {}) as {
          importMethod?: string
          protectionLevel?: string
        }
        if (!/^[a-zA-Z0-9_-]{1,63}$/.test(id)) return error(400, 'INVALID_ARGUMENT', 'Invalid importJobId.')
        if (!isImportMethod(importMethod))
          return error(400, 'INVALID_ARGUMENT', "Invalid value at 'import_job.import_method'.")
        if (protectionLevel !== 'HSM' && protectionLevel !== 'SOFTWARE')
          return error(400, 'INVALID_ARGUMENT', 'ImportJob.protection_level must be specified.')
        const name = `${keyRing}/importJobs/${id}`
        if (importJobs.has(name)) return error(409, 'ALREADY_EXISTS', `ImportJob ${name} already exists.`)
        const job = newImportJob(name, importMethod as string, protectionLevel)
        importJobs.set(name, job)
        return send(200, importJobResource(job))
      }

      /** cryptoKeyVersions.import: the shape checked now; the unwrapping decides the new version's state. */
      function importVersion(cryptoKey: string) {
        const held = cryptoKeys.get(cryptoKey)
        if (!held) return error(404, 'NOT_FOUND', `CryptoKey ${cryptoKey} not found.`)
        const { algorithm, importJob, wrappedKey, rsaAesWrappedKey } = (body ?? {}) as Record<string, unknown>
        if (typeof algorithm !== 'string' || !SIGN_ALGORITHMS.includes(algorithm))
          return error(400, 'INVALID_ARGUMENT', 'Algorithm must be compatible with purpose ASYMMETRIC_SIGN.')
        const job = typeof importJob === 'string' ? importJobs.get(importJob) : undefined
        if (!job) return error(404, 'NOT_FOUND', `ImportJob ${String(importJob)} not found.`)
        if (!job.wrapping)
          return error(
            400,
            'FAILED_PRECONDITION',
            `ImportJob ${job.name} is not active, current state is: PENDING_GENERATION.`,
          )
        if (job.protectionLevel !== held.protectionLevel)
          return error(
            400,
            'FAILED_PRECONDITION',
            'The ImportJob protection level does not match the CryptoKey version template.',
          )
        if (rsaAesWrappedKey !== undefined && !job.importMethod.includes('SHA1'))
          return error(
            400,
            'INVALID_ARGUMENT',
            `rsa_aes_wrapped_key cannot be used with ${job.importMethod}.`,
          )
        const material = wrappedKey ?? rsaAesWrappedKey
        const wrapped = typeof material === 'string' ? Buffer.from(material, 'base64') : Buffer.alloc(0)
        if (!wrappedShapeOk(job, wrapped))
          return error(
            400,
            'INVALID_ARGUMENT',
            `The wrapped key material is malformed for ${job.importMethod}.`,
          )
        held.last += 1
        const name = `${cryptoKey}/cryptoKeyVersions/${held.last}`
        const result = unwrapImport(job, wrapped, algorithm)
        const settled: Partial<Version> =
          'key' in result
            ? { state: 'ENABLED', key: heldKeyOf(result.key, algorithm) }
            : { state: 'IMPORT_FAILED', importFailureReason: result.failure }
        versions.set(name, { algorithm, importJob: job.name, state: 'PENDING_IMPORT', settles: settled })
        imported.push({ name, algorithm, importJob: job.name, importMethod: job.importMethod })
        return send(200, {
          name,
          state: 'PENDING_IMPORT',
          algorithm,
          protectionLevel: held.protectionLevel,
          importJob: job.name,
        })
      }
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
    /** The versions `cryptoKeyVersions.import` was asked for (never the key material). */
    imported,
    /** A key version named `name` (a resource name .../cryptoKeyVersions/N). */
    async addKey(name: string, alg: 'ES256' | 'ES384' = 'ES256') {
      const key = await generateTestKey(alg)
      versions.set(name, {
        algorithm: alg === 'ES256' ? 'EC_SIGN_P256_SHA256' : 'EC_SIGN_P384_SHA384',
        key,
        state: 'ENABLED',
      })
      return key
    },
    disable(name: string) {
      const held = versions.get(name)
      if (held) held.state = 'DISABLED'
    },
    /** The state of a version, without the read settling it. */
    stateOf: (name: string) => versions.get(name)?.state,
    expireTokens: () => tokens.clear(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

interface Version {
  algorithm: string
  key?: GeneratedKey
  state: string
  importJob?: string
  importFailureReason?: string
  settles?: Partial<Version>
}

/** An imported private key as the fake signs with it. */
function heldKeyOf(key: KeyObject, algorithm: string): GeneratedKey {
  const jwk = key.export({ format: 'jwk' }) as JWK
  const publicKey = createPublicKey(key)
  return {
    alg: algorithm === 'EC_SIGN_P256_SHA256' ? 'ES256' : 'ES384',
    secret: base64url.decode(jwk.d as string),
    publicJwk: { kty: 'EC', crv: jwk.crv as string, x: jwk.x as string, y: jwk.y as string },
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    spkiDer: publicKey.export({ format: 'der', type: 'spki' }),
  }
}
