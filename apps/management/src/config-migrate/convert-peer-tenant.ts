import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { convertCredential } from './convert-credential'
import { jsonFiles, readJson } from './json-files'

type Json = Record<string, unknown>

/** One file of the converted tenant folder: its path inside the tenant folder and its body. */
export interface PeerOutputFile {
  path: string
  body: Json
}

export interface PeerTenantConversion {
  files: PeerOutputFile[]
  /** What was mapped, one line each, prefixed with the source file. */
  changes: string[]
  /** What has no equivalent here: any of them stops the migration (nothing is written). */
  errors: string[]
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
/** The EUDIPLO folder layout: `info.json`, `issuance/credentials/`, `presentation/`. */
export function isPeerTenantFolder(dir: string): boolean {
  return ['info.json', 'issuance', 'presentation'].some((entry) => existsSync(join(dir, entry)))
}

/** Peer roles → ours (spec §5); the peer's user and tenant administration have none per tenant. */
const ROLES: Record<string, string> = {
  'issuance:manage': 'issuance:config',
  'issuance:offer': 'issuance:offer',
  'presentation:manage': 'presentation:config',
  'presentation:request': 'presentation:request',
  'clients:manage': 'tenant:admin',
  'registrar:manage': 'registrar:manage',
}

/** Folders of the peer layout that are read; anything else in the tenant folder is an error. */
const KNOWN_ENTRIES = new Set([
  'info.json',
  'issuance',
  'presentation',
  'key-chains',
  'clients',
  'attribute-providers',
  'webhook-endpoints',
  'images',
])

/**
 * Converts one tenant folder of the peer product (EUDIPLO: `info.json`, `issuance/credentials/`,
 * `issuance/issuance.json`, `presentation/`, `key-chains/`, `clients/`, `attribute-providers/`,
 * `webhook-endpoints/`) to this service's import layout (docs/configuration-import.md).
 *
 * - `info.json` → `tenant.json` (`name`, `description`);
 * - key chains with a private JWK → `source: import` (its `crt` as the chain), without → `generate`;
 *   the `attestation` key chain becomes the tenant's `defaultKeyChainId` (it signs credentials
 *   there), the `access` one signs request objects of the presentation configurations;
 * - credentials (claims model) → version 2 (spec §9.2), top-level `vct` → `config.vct`,
 *   `lifeTime` → `lifetimeSeconds`; `issuance.json` `batchSize` and `dPopRequired` → each credential;
 * - presentations: `dcql_query` → `dcqlQuery`, `lifeTime` → `lifetimeSeconds`;
 * - clients: `secret` → `clientSecret`, roles mapped; endpoints: `name` → `description` when it has none.
 */
export function convertPeerTenant(src: string, tenant: string): PeerTenantConversion {
  const out: PeerTenantConversion = { files: [], changes: [], errors: [] }
  const error = (file: string, message: string) => out.errors.push(`${tenant}/${file}: ${message}`)
  const change = (file: string, message: string) => out.changes.push(`${tenant}/${file}: ${message}`)
  const read = (file: string): Json | undefined => {
    const body = readJson(join(src, file))
    if (isObject(body)) return body
    error(file, 'not a JSON object')
    return undefined
  }
  /** Keys of `body` outside `known`: no equivalent here, so the file cannot be migrated as is. */
  const refuseUnknown = (file: string, body: Json, known: string[]) => {
    const unknown = Object.keys(body).filter((key) => !known.includes(key))
    if (unknown.length) error(file, `no equivalent for ${unknown.map((k) => `'${k}'`).join(', ')}`)
  }

  /** The JSON objects of a folder of the tenant, each checked against the keys it may have. */
  const filesOf = (folder: string, known?: string[]) =>
    jsonFiles(join(src, folder)).flatMap((file) => {
      const path = `${folder}/${file}`
      const body = read(path)
      if (!body) return []
      if (known) refuseUnknown(path, body, known)
      return [{ file, path, body }]
    })

  for (const entry of readdirSync(src).sort())
    if (!KNOWN_ENTRIES.has(entry))
      error(
        entry,
        'not part of the layout this migration knows (trust lists, status lists and the like have no equivalent)',
      )
  if (existsSync(join(src, 'images')))
    change(
      'images/',
      'not copied: display images must be served at https URLs, which `display[].logo.uri` then names',
    )

  const settings: Json = {}
  if (existsSync(join(src, 'info.json'))) {
    const info = read('info.json')
    if (info) {
      refuseUnknown('info.json', info, ['name', 'description'])
      if (typeof info.name === 'string') settings.name = info.name
      if (typeof info.description === 'string') settings.description = info.description
      change('info.json', '→ tenant.json (name, description)')
    }
  }

  // Key chains, and which one each usage maps to.
  const usage = new Map<string, string>()
  for (const { file, path, body } of filesOf('key-chains', [
    'id',
    'description',
    'usageType',
    'key',
    'kmsProvider',
    'crt',
    'rotationPolicy',
  ])) {
    const id = String(body.id ?? file.slice(0, -5))
    if ((body.kmsProvider ?? 'db') !== 'db') {
      error(
        path,
        `kmsProvider '${String(body.kmsProvider)}': register the key with source "external" and its externalKeyId by hand`,
      )
      continue
    }
    const description = typeof body.description === 'string' ? { description: body.description } : {}
    const certificateChain = Array.isArray(body.crt) && body.crt.length ? { certificateChain: body.crt } : {}
    if (isObject(body.key)) {
      const { kid: _kid, alg: _alg, ...privateKey } = body.key
      out.files.push({
        path: `key-chains/${id}.json`,
        body: { source: 'import', id, ...description, privateKey, ...certificateChain },
      })
      change(
        path,
        `→ key-chains/${id}.json (source import${certificateChain.certificateChain ? ', crt as certificateChain' : ''})`,
      )
    } else {
      out.files.push({ path: `key-chains/${id}.json`, body: { source: 'generate', id, ...description } })
      change(path, `→ key-chains/${id}.json (source generate: the file holds no key)`)
    }
    if (body.rotationPolicy !== undefined)
      change(path, 'rotationPolicy not migrated: set it with PATCH /api/key-chains/{id}')
    if (typeof body.usageType === 'string' && !usage.has(body.usageType)) usage.set(body.usageType, id)
  }
  const signing = usage.get('attestation')
  if (signing) {
    settings.defaultKeyChainId = signing
    change(`key-chains/${signing}.json`, 'usageType attestation → the tenant’s defaultKeyChainId')
  }
  if (Object.keys(settings).length) out.files.push({ path: 'tenant.json', body: settings })

  // Issuer-wide settings of the peer are per configuration here.
  let issuance: Json = {}
  if (existsSync(join(src, 'issuance', 'issuance.json'))) {
    issuance = read('issuance/issuance.json') ?? {}
    refuseUnknown('issuance/issuance.json', issuance, ['authServers', 'batchSize', 'dPopRequired', 'display'])
    if (issuance.display !== undefined)
      change('issuance/issuance.json', 'display not migrated: the issuer display comes from the tenant name')
  }
  for (const entry of existsSync(join(src, 'issuance')) ? readdirSync(join(src, 'issuance')).sort() : [])
    if (!['credentials', 'issuance.json'].includes(entry))
      error(`issuance/${entry}`, 'no equivalent (status lists are made per credential with statusManagement)')

  for (const { file, path, body } of filesOf(`issuance/credentials`)) {
    const { vct, lifeTime, iaeActions, ...v1 } = body
    if (iaeActions !== undefined) error(path, 'iaeActions (interactive authorization) have no equivalent')
    if (isObject(vct)) {
      error(
        path,
        'vct is an object (type metadata hosted by the peer): give config.vct a type URI, and sign its metadata with POST /api/schema-metadata/sign',
      )
      continue
    }
    const config = isObject(v1.config) ? { ...v1.config } : {}
    if (typeof vct === 'string') config.vct = vct
    const converted = convertCredential(
      { ...v1, config },
      { id: file.slice(0, -5), keyChainOfCert: () => undefined },
    )
    const v2 = converted.config
    if (typeof lifeTime === 'number') v2.lifetimeSeconds = lifeTime
    if (typeof issuance.batchSize === 'number' && v2.batchSize === undefined)
      v2.batchSize = issuance.batchSize
    if (issuance.dPopRequired === true) v2.dpop = 'required'
    const id = String(v2.id)
    out.files.push({ path: `credentials/${id}.json`, body: v2 })
    const mapped = [
      typeof vct === 'string' ? 'vct → config.vct' : undefined,
      typeof lifeTime === 'number' ? 'lifeTime → lifetimeSeconds' : undefined,
      v2.keyChainId === undefined ? 'no keyChainId: signed by the tenant’s default key chain' : undefined,
      ...converted.changes,
    ].filter((line) => line !== undefined)
    change(path, `→ credentials/${id}.json; ${mapped.join('; ')}`)
    if (converted.attributeProvider)
      out.files.push({
        path: `attribute-providers/${converted.attributeProvider.id}.json`,
        body: converted.attributeProvider.body,
      })
    if (converted.webhookEndpoint)
      out.files.push({
        path: `webhook-endpoints/${converted.webhookEndpoint.id}.json`,
        body: converted.webhookEndpoint.body,
      })
  }
  convertAuthServers(
    issuance.authServers,
    out.files.filter((f) => f.path.startsWith('credentials/')).map((f) => String((f.body as Json).id)),
    { files: out.files, change, error },
  )

  const access = usage.get('access') ?? signing
  for (const { file, path, body } of filesOf('presentation', [
    'id',
    'description',
    'dcql_query',
    'lifeTime',
    'registration_cert',
    'redirectUri',
    'webhookEndpointId',
  ])) {
    if (!access) {
      error(path, 'request objects need a key chain: add key-chains/*.json with usageType "access"')
      continue
    }
    const id = String(body.id ?? file.slice(0, -5))
    const presentation: Json = {
      id,
      ...(typeof body.description === 'string' ? { description: body.description } : {}),
      dcqlQuery: body.dcql_query,
      ...(typeof body.lifeTime === 'number' ? { lifetimeSeconds: body.lifeTime } : {}),
      ...(body.redirectUri !== undefined ? { redirectUri: body.redirectUri } : {}),
      ...(body.webhookEndpointId !== undefined ? { webhookEndpointId: body.webhookEndpointId } : {}),
      keyChainId: access,
    }
    out.files.push({ path: `presentations/${id}.json`, body: presentation })
    change(path, `→ presentations/${id}.json; dcql_query → dcqlQuery; keyChainId '${access}'`)
    if (body.registration_cert !== undefined)
      change(
        path,
        'registration_cert not migrated: request one with POST /api/registrar/registration-certificates',
      )
  }

  for (const { file, path, body } of filesOf('clients', [
    'clientId',
    'secret',
    'description',
    'roles',
    'allowedPresentationConfigs',
    'allowedIssuanceConfigs',
  ])) {
    const roles = Array.isArray(body.roles) ? body.roles.map(String) : []
    const unmapped = roles.filter((role) => !(role in ROLES))
    if (unmapped.length)
      error(path, `roles without an equivalent for a tenant client: ${unmapped.join(', ')}`)
    const clientId = String(body.clientId ?? file.slice(0, -5))
    const { clientId: _id, secret, roles: _roles, ...rest } = body
    out.files.push({
      path: `clients/${clientId}.json`,
      body: { ...rest, clientSecret: secret, roles: [...new Set(roles.map((role) => ROLES[role] ?? role))] },
    })
    change(
      path,
      `→ clients/${clientId}.json; secret → clientSecret; roles ${roles.join(', ')} → ${roles.map((r) => ROLES[r] ?? r).join(', ')}`,
    )
  }

  for (const kind of ['attribute-providers', 'webhook-endpoints']) {
    for (const { file, path, body } of filesOf(kind, ['id', 'name', 'description', 'url', 'auth'])) {
      const { name, ...rest } = body
      if (typeof name === 'string' && rest.description === undefined) rest.description = name
      out.files.push({ path: `${kind}/${String(body.id ?? file.slice(0, -5))}.json`, body: rest })
      change(
        path,
        `→ ${kind}/${String(body.id ?? file.slice(0, -5))}.json${name === undefined ? '' : '; name dropped (description kept)'}`,
      )
    }
  }
  return out
}

/**
 * The peer's `authServers` (issuer URLs of external authorization servers) → `auth-servers/`, each
 * authorising every converted credential configuration, with the defaults: RFC 9068 JWT access
 * tokens, `authorization_details` and `scope`, claims from the token
 * (docs/authorization-code-flow.md#external-authorization-servers).
 */
function convertAuthServers(
  servers: unknown,
  credentialIds: string[],
  out: {
    files: { path: string; body: unknown }[]
    change: (file: string, message: string) => void
    error: (file: string, message: string) => void
  },
) {
  const file = 'issuance/issuance.json'
  if (!Array.isArray(servers)) return
  for (const [index, issuer] of servers.entries()) {
    if (typeof issuer !== 'string' || !URL.canParse(issuer)) {
      out.error(file, `authServers.${index}: not an issuer URL`)
      continue
    }
    if (!credentialIds.length) {
      out.error(file, `authServers.${index}: no credential configuration to authorise`)
      continue
    }
    const id = `as-${index + 1}`
    out.files.push({
      path: `auth-servers/${id}.json`,
      body: { id, issuer, credentialConfigurationIds: credentialIds },
    })
    out.change(
      file,
      `authServers.${index} → auth-servers/${id}.json (JWT access tokens for every credential; check tokenCheck, mapping and claimsSource)`,
    )
  }
}
