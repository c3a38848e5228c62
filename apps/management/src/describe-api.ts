import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { Database } from '@credential-service/db-schema'
import { createServer } from '@credential-service/server-kit'
import { buildManagementApp } from './app'
import { parseManagementConfig } from './config'

/** A stand-in URL: the document's `servers` entry; the SDK takes its base URL at run time. */
const DESCRIBE_PUBLIC_URL = 'https://credentials.example.com'

/**
 * The OpenAPI description of the management API, built without a database: routes are only
 * registered, never called, so any database access fails loudly instead of answering. The SDK
 * generator and its staleness test use this (packages/sdk/scripts/generate.ts).
 */
export async function describeManagementApi(): Promise<Record<string, unknown>> {
  const config = parseManagementConfig({
    PUBLIC_URL: DESCRIBE_PUBLIC_URL,
    // Only derives the token signing key, which the document never shows.
    MASTER_SECRET: 'describe-only-master-secret-0123456789abcdef',
    AUTH_CLIENT_ID: 'describe-only',
    AUTH_CLIENT_SECRET: 'describe-only-secret',
    KEY_ROTATION_CHECK_SECONDS: '0',
  })
  const noDatabase = new Proxy({} as Database, {
    get() {
      throw new Error('describeManagementApi has no database')
    },
  })
  const app = await createServer({
    logLevel: 'silent',
    ping: async () => false,
    apps: [
      buildManagementApp({
        config,
        database: { db: noDatabase, kind: 'postgres', ping: async () => false },
        signingKey: await deriveManagementSigningKey(config.MASTER_SECRET),
      }),
    ],
  })
  try {
    const response = await app.inject({ url: '/api/docs-json' })
    return response.json()
  } finally {
    await app.close()
  }
}
