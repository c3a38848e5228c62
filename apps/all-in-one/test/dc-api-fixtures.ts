import type { DcApiRequest } from '@credential-service/sdk'
import { expect } from 'vitest'
import { apiClient, listenAllInOneWorld } from './harness'

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

/** The management API at `baseUrl()` as `auth()` calls it, and a dc-api request of it. */
export function managementCaller(baseUrl: () => string, auth: () => Record<string, string>) {
  const send = apiClient(baseUrl, auth)
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
export async function startDcApiWorld(env: Record<string, string> = {}) {
  const started = await listenAllInOneWorld('verifier-interop', { OUTBOUND_ALLOW_HTTP: 'true', ...env })
  return { ...started, port: Number(new URL(started.baseUrl).port) }
}
