import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'

export interface DevSecrets {
  MASTER_SECRET: string
  AUTH_CLIENT_ID: string
  AUTH_CLIENT_SECRET: string
}

/**
 * `npm start` needs no set-up: secrets not given in the environment are generated once and kept
 * in a file beside the embedded database, so keys and the root client survive restarts. Only the
 * all-in-one dev entry calls this; operator commands use {@link readDevSecrets}.
 */
export function loadOrCreateDevSecrets(file: string): DevSecrets {
  const existing = readDevSecrets(file)
  if (existing) return existing
  const secrets: DevSecrets = {
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    AUTH_CLIENT_ID: 'root',
    AUTH_CLIENT_SECRET: randomBytes(24).toString('base64url'),
  }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 })
  return secrets
}

/** The secrets an earlier `npm start` generated, or undefined; never creates the file. */
export function readDevSecrets(file: string): DevSecrets | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DevSecrets) : undefined
}
