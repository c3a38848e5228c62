import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { startIssuerEntities } from './federation-issuer-entities'
import { freePort } from './free-port'
import { startAllInOne, tenantAdmin } from './harness'
import { type LocalFederation, startLocalFederation } from './local-federation'
import { resolveAndAnswer } from './oid4vp-wallet'

// biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
export type Loose = Record<string, any>

/**
 * A local federation (anchor, intermediate, issuer entities on loopback) and an all-in-one process
 * with one tenant whose verifier checks presented credentials against it: a key chain `keys` and
 * the tenant's API as `api`.
 */
export async function startFederatedVerifier(tenant: string, roles: string[]) {
  const federation: LocalFederation = await startLocalFederation()
  const issuers = await startIssuerEntities(federation)
  const port = await freePort()
  const baseUrl = `http://localhost:${port}`
  const started = await startAllInOne(testDatabases().at(-1) as TestDatabase, baseUrl, {
    // The local federation listens on loopback, which the outbound policy refuses unless allowed.
    OUTBOUND_ALLOW_HTTP: 'true',
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
  })
  const app: FastifyInstance = started.app
  await app.listen({ host: '::', port })
  const auth = (await tenantAdmin(app, started, tenant, ['key:manage', ...roles])).admin
  const api = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Loose }> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...auth },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, json: (await response.json()) as Loose }
  }
  expect((await api('POST', '/api/key-chains', { source: 'generate', id: 'keys' })).status).toBe(201)
  /** A request of configuration `configId`, answered by `answer`; the wallet's view and the session. */
  const present = async (
    configId: string,
    answer: (request: { nonce: string; client_id: string }) => Promise<string>,
  ) => {
    const created = (await api('POST', '/api/presentation-requests', { presentationConfigId: configId })).json
    const answered = await resolveAndAnswer(created.authorizationRequestUri, async (request) => ({
      age: [await answer(request as { nonce: string; client_id: string })],
    }))
    const session = (await api('GET', `/api/sessions/${created.sessionId}`)).json
    return { request: answered.request as Loose, session }
  }
  return {
    federation,
    issuers,
    api,
    present,
    async close() {
      await app.close()
      await federation.close()
      await issuers.close()
    },
  }
}
