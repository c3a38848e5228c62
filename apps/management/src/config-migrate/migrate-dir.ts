import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { findRemovedCredentialFields } from '@credential-service/core-domain'
import { convertAnchors } from './convert-anchors'
import { convertCredential } from './convert-credential'
import { convertPeerTenant, isPeerTenantFolder, type PeerTenantConversion } from './convert-peer-tenant'
import { jsonFiles, readJson as readJsonFile } from './json-files'

type Json = Record<string, unknown>

export interface MigrationResult {
  /** One line per change, prefixed with the file it concerns. */
  changes: string[]
  written: string[]
}

const readJson = (path: string) => readJsonFile(path) as Json
const subfolders = (dir: string) =>
  readdirSync(dir)
    .filter((f) => statSync(join(dir, f)).isDirectory())
    .sort()

function certificatesOf(cert: Json): string[] {
  for (const key of ['crt', 'certificate', 'pem'])
    if (typeof cert[key] === 'string') return [cert[key] as string]
  if (Array.isArray(cert.certificateChain)) return cert.certificateChain.map(String)
  return []
}

/**
 * `config:migrate <dir> --out <newdir>`: writes a 5.0 configuration folder converted from a 4.x one
 * (version 1 credential files), a 3.x one (`keys/` + `certs/`), or the peer product's (EUDIPLO:
 * `info.json`, `issuance/credentials/`, `presentation/`; see convert-peer-tenant.ts), tenant by
 * tenant; PEM `trustAnchors` become pem trust lists (convert-anchors.ts). The input folder is only read.
 */
export function migrateConfigDir(input: string, output: string): MigrationResult {
  const from = resolve(input)
  const to = resolve(output)
  if (!existsSync(from)) throw new Error(`input folder '${input}' does not exist`)
  if (to === from || to.startsWith(`${from}/`))
    throw new Error('the output folder must be outside the input folder')
  if (existsSync(to) && readdirSync(to).length > 0) throw new Error(`output folder '${output}' is not empty`)

  // Folders laid out as the peer product lays them out are converted first: a part that cannot
  // be migrated stops the whole migration before anything is written.
  const peers = new Map<string, PeerTenantConversion>()
  for (const tenant of subfolders(from))
    if (isPeerTenantFolder(join(from, tenant)))
      peers.set(tenant, convertPeerTenant(join(from, tenant), tenant))
  const errors = [...peers.values()].flatMap((conversion) => conversion.errors)
  if (errors.length)
    throw new Error(
      `${errors.length} part(s) cannot be migrated; nothing was written:\n${errors.map((e) => `  ${e}`).join('\n')}`,
    )

  const result: MigrationResult = { changes: [], written: [] }
  const write = (path: string, body: unknown) => {
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`, { flag: 'wx' })
    result.written.push(relative(to, path))
  }

  for (const tenant of subfolders(from)) {
    const src = join(from, tenant)
    const dst = join(to, tenant)
    mkdirSync(dst, { recursive: true })
    const peer = peers.get(tenant)
    if (peer) {
      for (const file of peer.files) write(join(dst, file.path), file.body)
      result.changes.push(...peer.changes)
      continue
    }
    if (existsSync(join(src, 'tenant.json')))
      write(join(dst, 'tenant.json'), readJson(join(src, 'tenant.json')))

    // 3.x: keys/<id>.json + certs/<id>.json → key-chains/<keyId>.json (import source).
    const certs = jsonFiles(join(src, 'certs')).map((f) => ({
      file: f,
      json: readJson(join(src, 'certs', f)),
    }))
    const keyChainOfCert = (certId: string) => {
      const cert = certs.find((c) => (c.json.id ?? c.file.slice(0, -5)) === certId)
      return cert && typeof cert.json.keyId === 'string' ? cert.json.keyId : undefined
    }
    for (const file of jsonFiles(join(src, 'keys'))) {
      const key = readJson(join(src, 'keys', file))
      const id = String(key.id ?? file.slice(0, -5))
      const chain = certs.filter(
        (c) =>
          c.json.keyId === id || (c.json.keyId === undefined && (c.json.id ?? c.file.slice(0, -5)) === id),
      )
      const certificateChain = chain.flatMap((c) => certificatesOf(c.json))
      write(join(dst, 'key-chains', `${id}.json`), {
        source: 'import',
        id,
        privateKey: key.privateKeyPem,
        ...(certificateChain.length ? { certificateChain } : {}),
      })
      result.changes.push(
        `${tenant}/keys/${file}: → key-chains/${id}.json${chain.length ? ` with ${chain.map((c) => `certs/${c.file}`).join(', ')}` : ''}${key.algorithm ? ` (algorithm ${String(key.algorithm)} is read from the key)` : ''}`,
      )
    }
    const unmatched = certs.filter(
      (c) => !jsonFiles(join(src, 'keys')).some((k) => k.slice(0, -5) === c.json.keyId),
    )
    for (const cert of unmatched)
      result.changes.push(`${tenant}/certs/${cert.file}: no key file for it; not migrated`)

    for (const kind of [
      'key-chains',
      'attribute-providers',
      'webhook-endpoints',
      'trust-lists',
      'wallet-providers',
      'presentations',
      'clients',
    ]) {
      for (const file of jsonFiles(join(src, kind))) {
        let body = readJson(join(src, kind, file))
        if (kind === 'presentations' && typeof body.keyId === 'string' && body.keyChainId === undefined) {
          const { keyId, ...rest } = body
          body = { ...rest, keyChainId: keyId }
          result.changes.push(`${tenant}/${kind}/${file}: keyId → keyChainId`)
        }
        if (kind === 'presentations' || kind === 'wallet-providers') {
          const converted = convertAnchors(body)
          body = converted.body
          const list = converted.list
          // Trust lists are written before: a list of the same set (or of an earlier run) is kept.
          if (list) {
            const path = join(dst, 'trust-lists', `${list.id}.json`)
            if (!existsSync(path)) write(path, list.body)
            result.changes.push(
              `${tenant}/${kind}/${file}: trustAnchors → trust-lists/${list.id}.json, named in trustListIds`,
            )
          }
        }
        write(join(dst, kind, file), body)
      }
    }

    for (const file of jsonFiles(join(src, 'credentials'))) {
      const body = readJson(join(src, 'credentials', file))
      if (findRemovedCredentialFields(body).length === 0) {
        write(join(dst, 'credentials', file), body)
        continue
      }
      const converted = convertCredential(body, { id: file.slice(0, -5), keyChainOfCert })
      write(join(dst, 'credentials', file), converted.config)
      if (converted.attributeProvider)
        write(
          join(dst, 'attribute-providers', `${converted.attributeProvider.id}.json`),
          converted.attributeProvider.body,
        )
      if (converted.webhookEndpoint)
        write(
          join(dst, 'webhook-endpoints', `${converted.webhookEndpoint.id}.json`),
          converted.webhookEndpoint.body,
        )
      result.changes.push(...converted.changes.map((change) => `${tenant}/credentials/${file}: ${change}`))
    }
  }
  return result
}
