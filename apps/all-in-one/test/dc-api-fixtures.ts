import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { DcApiRequest } from '@credential-service/sdk'
import { expect } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'

// What the Digital Credentials API suites ask for: tenant a of the `verifier-interop` world issues both.
export const VCT = 'urn:eudi:pid:1'
export const MDL = 'org.iso.18013.5.1.mDL'
export const NS = 'org.iso.18013.5.1'
export const PID_QUERY = {
  credentials: [
    { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['given_name'] }] },
  ],
}
export const MDL_QUERY = {
  credentials: [
    { id: 'mdl', format: 'mso_mdoc', meta: { doctype_value: MDL }, claims: [{ path: [NS, 'family_name'] }] },
  ],
}

/** A presentation request created with `transport: 'dc-api'`, as the suites read it. */
export interface DcApiCreated {
  sessionId: string
  authorizationRequestUri: string
  dcApi: DcApiRequest
}

/** The management API at `baseUrl()` as `auth()` calls it: JSON in, loosely typed JSON out. */
export function managementCaller(baseUrl: () => string, auth: () => Record<string, string>) {
  const send = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...auth() },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
    return { status: response.status, body: (await response.json()) as any }
  }
  /** A dc-api request of the configuration for a page of `origin`; 201 expected. */
  const dcApiRequest = async (presentationConfigId: string, origin: string): Promise<DcApiCreated> => {
    const created = await send('POST', '/api/presentation-requests', {
      presentationConfigId,
      transport: 'dc-api',
      origin,
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    return created.body
  }
  return { send, dcApiRequest }
}

/**
 * The `verifier-interop` world (test/worlds/verifier-interop; tenant a issues `pid` and `mdl`)
 * listening at `http://localhost:<port>`, with plain http allowed (origins, webhooks).
 */
export async function startDcApiWorld() {
  const port = await freePort()
  const baseUrl = `http://localhost:${port}`
  const started = await startAllInOneWorld(
    testDatabases().at(-1) as TestDatabase,
    'verifier-interop',
    baseUrl,
    {
      OUTBOUND_ALLOW_HTTP: 'true',
    },
  )
  await started.app.listen({ host: '::', port })
  return { ...started, port, baseUrl }
}
