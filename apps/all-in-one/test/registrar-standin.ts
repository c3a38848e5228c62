import { createPublicKey, randomBytes, randomUUID, X509Certificate } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createCertificate, generateKeyPair, type KeyPairJwks } from '@credential-service/crypto'
import { compactVerify, decodeProtectedHeader, importJWK, type JWK, SignJWT } from 'jose'

export interface RegistrarCall {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A schema metadata entry as the stand-in recorded it: the JWT exactly as submitted. */
export interface SchemaMetadataEntry {
  entryId: string
  /** The `id` of the signed document: a reserved id, or one recorded before (a new version). */
  id: string
  version: string
  jwt: string
}

interface Authority {
  pair: KeyPairJwks
  certificate: string
}

/**
 * A registrar speaking exactly the protocol of docs/registrar.md, in process: an OAuth 2.0 token
 * endpoint (client credentials, HTTP Basic) at `/oauth2/token`, and the REST API under `/api`
 * (relying parties, access certificates from an access CA under its root, registration
 * certificates as signed JWTs, TS11 schema metadata: ids reserved with a token, signed documents
 * submitted under them). `fail` makes the next call of a path answer a status instead.
 */
export async function startRegistrarStandIn(client: { id: string; secret: string }) {
  const calls: RegistrarCall[] = []
  const tokens = new Set<string>()
  const relyingParties = new Map<string, { name: string; roles: string[] }>()
  const failures = new Map<string, number>()
  const reservations = new Map<string, { token: string; expiresAt: Date }>()
  const schemaMetadata: SchemaMetadataEntry[] = []
  /** When set, access certificates are issued for this key instead of the one sent (a faulty registrar). */
  let certifyInstead: JWK | undefined

  const rootPair = await generateKeyPair('ES256')
  const root: Authority = {
    pair: rootPair,
    certificate: await createCertificate({
      subjectPublicJwk: rootPair.publicJwk,
      issuerPrivateJwk: rootPair.privateJwk,
      subject: 'CN=Registrar Root CA,C=EU',
      validityDays: 3650,
      ca: true,
      // Its access CA sits below it (RFC 5280 §4.2.1.9).
      pathLength: 1,
    }),
  }
  const accessPair = await generateKeyPair('ES256')
  const accessCa: Authority = {
    pair: accessPair,
    certificate: await createCertificate({
      subjectPublicJwk: accessPair.publicJwk,
      issuerPrivateJwk: root.pair.privateJwk,
      issuerCertificate: root.certificate,
      subject: 'CN=Registrar Access CA,C=EU',
      validityDays: 3650,
      ca: true,
    }),
  }

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))

  function basicCredentials(header: string | undefined): [string, string] | undefined {
    if (!header?.startsWith('Basic ')) return undefined
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return undefined
    const form = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '))
    return [form(decoded.slice(0, colon)), form(decoded.slice(colon + 1))]
  }

  // RFC 6749 §4.4 with client authentication by HTTP Basic (§2.3.1); errors per §5.2.
  function token(req: IncomingMessage, body: string, res: ServerResponse) {
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
      return json(res, 400, { error: 'invalid_request' })
    if (new URLSearchParams(body).get('grant_type') !== 'client_credentials')
      return json(res, 400, { error: 'unsupported_grant_type' })
    const credentials = basicCredentials(req.headers.authorization)
    if (!credentials || credentials[0] !== client.id || credentials[1] !== client.secret)
      return json(res, 401, { error: 'invalid_client' }, { 'www-authenticate': 'Basic realm="registrar"' })
    const accessToken = randomUUID()
    tokens.add(accessToken)
    return json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300 })
  }

  async function accessCertificate(body: Record<string, unknown>, res: ServerResponse) {
    if (!relyingParties.has(String(body.rpId))) return json(res, 404, { message: 'unknown relying party' })
    let subjectJwk: JWK
    try {
      subjectJwk = createPublicKey(String(body.publicKey)).export({ format: 'jwk' }) as JWK
    } catch {
      return json(res, 400, { message: 'publicKey must be an SPKI PEM' })
    }
    const dns = Array.isArray(body.dns) ? body.dns.map(String) : []
    const leaf = await createCertificate({
      subjectPublicJwk: certifyInstead ?? subjectJwk,
      issuerPrivateJwk: accessCa.pair.privateJwk,
      issuerCertificate: accessCa.certificate,
      subject: `CN=${relyingParties.get(String(body.rpId))?.name},C=EU`,
      validityDays: 365,
      dnsNames: dns,
    })
    // The chain as registrars hand it out: leaf, intermediate, root.
    return json(res, 201, { id: randomUUID(), crt: `${leaf}${accessCa.certificate}${root.certificate}` })
  }

  async function registrationCertificate(body: Record<string, unknown>, res: ServerResponse) {
    const rp = relyingParties.get(String(body.rpId))
    if (!rp) return json(res, 404, { message: 'unknown relying party' })
    const missing = ['privacy_policy', 'support_uri', 'purpose', 'credentials'].filter(
      (key) => body[key] === undefined || (Array.isArray(body[key]) && (body[key] as unknown[]).length === 0),
    )
    if (missing.length) return json(res, 400, { message: `missing ${missing.join(', ')}` })
    const jwt = await new SignJWT({
      name: rp.name,
      sub: String(body.rpId),
      privacy_policy: body.privacy_policy,
      support_uri: body.support_uri,
      purpose: body.purpose,
      credentials: body.credentials,
    })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'rc-wrp+jwt',
        x5c: [accessCa.certificate.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '')],
      })
      .setIssuedAt()
      .setExpirationTime('90d')
      .sign(await importJWK(accessCa.pair.privateJwk, 'ES256'))
    return json(res, 201, { id: randomUUID(), jwt })
  }

  // The registrar's catalogue URL of an attestation; the reservation token proves who reserved it.
  function reserve(res: ServerResponse) {
    const reservedId = `${origin}/api/schema-metadata/${randomBytes(8).toString('hex')}`
    const reservation = {
      token: randomBytes(24).toString('base64url'),
      expiresAt: new Date(Date.now() + 86_400_000),
    }
    reservations.set(reservedId, reservation)
    return json(res, 201, {
      reservedId,
      expiresAt: reservation.expiresAt.toISOString(),
      reservationToken: reservation.token,
    })
  }

  /**
   * A signed TS11 document (`attestation-schema+jwt`) whose signature verifies against its `x5c`
   * leaf; its `id` is either reserved (then `X-Reservation-Token` must be the reservation's, and
   * the reservation is used up) or an entry's already recorded (a new version of it).
   */
  async function submitSchemaMetadata(
    req: IncomingMessage,
    body: Record<string, unknown>,
    res: ServerResponse,
  ) {
    const jwt = body.jwt
    if (typeof jwt !== 'string') return json(res, 400, { message: 'jwt is required' })
    let payload: Record<string, unknown>
    try {
      const header = decodeProtectedHeader(jwt)
      if (header.typ !== 'attestation-schema+jwt')
        return json(res, 400, { message: 'typ must be attestation-schema+jwt' })
      const leaf = header.x5c?.[0]
      if (!leaf) return json(res, 401, { message: 'the signer certificate (x5c) is missing' })
      const key = new X509Certificate(Buffer.from(leaf, 'base64')).publicKey
      payload = JSON.parse(new TextDecoder().decode((await compactVerify(jwt, key)).payload))
    } catch {
      return json(res, 401, { message: 'invalid signature' })
    }
    const { id, version } = payload
    if (typeof id !== 'string' || typeof version !== 'string')
      return json(res, 400, { message: 'id and version are required' })
    const reservation = reservations.get(id)
    if (reservation) {
      if (req.headers['x-reservation-token'] !== reservation.token || reservation.expiresAt < new Date())
        return json(res, 403, { message: 'the reservation token does not match the reserved id' })
      reservations.delete(id)
    } else if (!schemaMetadata.some((entry) => entry.id === id)) {
      return json(res, 400, { message: 'unknown schema id: reserve one first' })
    } else if (schemaMetadata.some((entry) => entry.id === id && entry.version === version)) {
      return json(res, 409, { message: 'this version exists already' })
    }
    const entry = { entryId: randomUUID(), id, version, jwt }
    schemaMetadata.push(entry)
    return json(res, 201, { id: entry.entryId, version, signedJwt: jwt, createdAt: new Date().toISOString() })
  }

  async function route(req: IncomingMessage, body: string, res: ServerResponse) {
    const path = new URL(req.url ?? '/', 'http://registrar').pathname
    const failWith = failures.get(path)
    if (failWith !== undefined) {
      failures.delete(path)
      return json(res, failWith, { message: 'failure on purpose' })
    }
    if (req.method === 'POST' && path === '/oauth2/token') return token(req, body, res)
    const bearer = String(req.headers.authorization ?? '')
    if (!bearer.startsWith('Bearer ') || !tokens.has(bearer.slice(7)))
      return json(res, 401, { message: 'Unauthorized' }, { 'www-authenticate': 'Bearer' })
    let parsed: Record<string, unknown>
    try {
      parsed = JSON.parse(body)
    } catch {
      return json(res, 400, { message: 'the body must be JSON' })
    }
    if (req.method === 'POST' && path === '/api/relying-parties') {
      if (typeof parsed.name !== 'string' || !parsed.name)
        return json(res, 400, { message: 'name is required' })
      const id = randomUUID()
      relyingParties.set(id, { name: parsed.name, roles: (parsed.roles as string[]) ?? [] })
      return json(res, 201, { id, name: parsed.name, createdAt: new Date().toISOString() })
    }
    if (req.method === 'POST' && path === '/api/access-certificates') return accessCertificate(parsed, res)
    if (req.method === 'POST' && path === '/api/registration-certificates')
      return registrationCertificate(parsed, res)
    if (req.method === 'POST' && path === '/api/schema-metadata/reserve') return reserve(res)
    if (req.method === 'POST' && path === '/api/schema-metadata')
      return submitSchemaMetadata(req, parsed, res)
    return json(res, 404, { message: 'no such route' })
  }

  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body })
      route(req, body, res).catch(() => json(res, 500, { message: 'stand-in fault' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`

  return {
    baseUrl: `${origin}/api`,
    tokenUrl: `${origin}/oauth2/token`,
    calls,
    relyingParties,
    /** Open reservations of schema metadata ids, by reserved id. */
    reservations,
    /** Submitted schema metadata, in order. */
    schemaMetadata,
    root: root.certificate,
    accessCa: accessCa.certificate,
    /** The next call of `path` (e.g. `/api/access-certificates`) answers `status`. */
    fail(path: string, status: number) {
      failures.set(path, status)
    },
    /** Certify this key instead of the requested one (undefined: behave). */
    certifyWrongKey(jwk: JWK | undefined) {
      certifyInstead = jwk
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
export type RegistrarStandIn = Awaited<ReturnType<typeof startRegistrarStandIn>>
