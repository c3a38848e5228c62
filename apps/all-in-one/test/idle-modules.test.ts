import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { verifyMasterSecret } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startProcess } from './processes'

/**
 * Issue 20 (idle memory): what a process does not use at start is loaded on first use, so a fresh
 * process stays small. Each app is started as its own process on PostgreSQL, with a `--import`
 * hook that records every module it loads; once it is ready, none of these may be among them.
 * A static import of one of them anywhere in the app's import graph fails this test.
 */
const loadedOnFirstUse: Record<string, RegExp> = {
  // The embedded database, only without DATABASE_URL.
  PGlite: /\/node_modules\/@electric-sql\/pglite\//,
  // Identity provider admin client (OIDC mode only) and its HTTP stack.
  'Keycloak admin client': /\/node_modules\/@keycloak\/keycloak-admin-client\//,
  kiota: /\/node_modules\/@microsoft\/kiota-/,
  // Cloud KMS key chains only.
  'AWS SDK': /\/node_modules\/@aws-sdk\//,
  // Outbound calls (status lists, attribute providers, webhooks) only.
  undici: /\/node_modules\/undici\//,
  // Swagger UI assets and the OpenAPI document: on the first request to /api/docs*.
  'Swagger UI': /\/node_modules\/@fastify\/swagger-ui\//,
  '@fastify/swagger': /\/node_modules\/@fastify\/swagger\//,
  '@fastify/static': /\/node_modules\/@fastify\/static\//,
  // Credential formats, certificates and status lists: on the first credential or presentation.
  '@owf/mdoc': /\/node_modules\/@owf\/mdoc\//,
  '@sd-jwt': /\/node_modules\/@sd-jwt\//,
  'cbor-x': /\/node_modules\/cbor-x\//,
  '@peculiar (X.509, ASN.1)': /\/node_modules\/@peculiar\//,
  // Issue 26: the QR code of the presentation login page, on its first use.
  qrcode: /\/node_modules\/qrcode\//,
  // Issue 23 item 6: the OpenTelemetry SDK and exporters, only with OTEL_EXPORTER_OTLP_ENDPOINT.
  'OpenTelemetry SDK': /\/node_modules\/@opentelemetry\/(?!api\/)/,
}

const env = {
  MASTER_SECRET: TEST_MASTER_SECRET,
  AUTH_CLIENT_ID: `root-${crypto.randomUUID()}`,
  AUTH_CLIENT_SECRET: 'idle-modules-root-secret-0123456789',
}

describe.runIf(process.env.TEST_DATABASE_URL)('issue 20: modules a fresh process has not loaded', () => {
  let scratch: string
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'idle-modules-'))
    // The shared database must already remember the suites' secret, whichever suite runs first.
    const database = await (testDatabases().find((d) => d.name === 'postgres') as TestDatabase).open()
    await verifyMasterSecret(database.db, TEST_MASTER_SECRET)
    await database.close()
  })
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  it.concurrent.each(['management', 'issuer', 'verifier', 'all-in-one'])(
    '%s with DATABASE_URL, once ready',
    async (app) => {
      const record = join(scratch, `${app}.txt`)
      const service = await startProcess(
        app,
        { ...env, DATABASE_URL: process.env.TEST_DATABASE_URL as string, RECORD_MODULE_LOADS: record },
        { nodeArgs: ['--import', './apps/all-in-one/test/record-module-loads.mjs'] },
      )
      try {
        expect(await service.ready(), service.stderr()).toBe(200)
        const loaded = readFileSync(record, 'utf8').split('\n')
        // The hook saw the process start: fastify and postgres.js are loaded by every app.
        expect(loaded.some((url) => url.includes('/node_modules/fastify/'))).toBe(true)
        expect(loaded.some((url) => url.includes('/node_modules/postgres/'))).toBe(true)
        const unexpected = Object.entries(loadedOnFirstUse)
          .filter(([, pattern]) => loaded.some((url) => pattern.test(url)))
          .map(([name]) => name)
        expect(unexpected).toStrictEqual([])
      } finally {
        await service.stop()
      }
    },
    120_000,
  )
})
