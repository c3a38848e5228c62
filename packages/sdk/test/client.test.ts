import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type * as domain from '@credential-service/core-domain'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import {
  type ClaimFieldDefinitionDto,
  type Client,
  type CredentialConfig,
  type CredentialConfigDefinition,
  createManagementClient,
  type FieldDisplayDto,
  type KeyChain,
  ManagementApiError,
  type ManagementClient,
  type OfferCreated,
  type Problem,
  type Role,
  requestClientCredentialsToken,
  type Session,
  type Tenant,
  type TenantCreate,
  type WebhookEvent,
} from '../src/index'

describe('SDK public types', () => {
  it('issue 13: resource types generated from the OpenAPI description equal the contract’s zod types', () => {
    expectTypeOf<Tenant>().toEqualTypeOf<domain.Tenant>()
    expectTypeOf<Client>().toEqualTypeOf<domain.Client>()
    expectTypeOf<Role>().toEqualTypeOf<domain.Role>()
    expectTypeOf<KeyChain['kmsProvider']>().toEqualTypeOf<domain.KmsProvider>()
    expectTypeOf<Problem>().toEqualTypeOf<domain.Problem>()
    expectTypeOf<Session['status']>().toEqualTypeOf<domain.Session['status']>()
  })

  it('spec §2.3: ClaimFieldDefinitionDto and FieldDisplayDto are the field-based model; removed fields are not accepted', () => {
    expectTypeOf<FieldDisplayDto>().toEqualTypeOf<{ lang: string; label: string }>()
    expectTypeOf<CredentialConfig['fields']>().toEqualTypeOf<ClaimFieldDefinitionDto[]>()
    expectTypeOf<ClaimFieldDefinitionDto['disclosable']>().toEqualTypeOf<boolean | undefined>()
    // @ts-expect-error spec §9.2: `claims` and `disclosureFrame` are gone from the credential configuration
    const legacy: CredentialConfigDefinition = { claims: {}, id: 'x' }
    expect(legacy).toBeDefined()
  })

  it('issue 13: request bodies take the input shape (defaults optional), methods answer the output shape', () => {
    expectTypeOf<TenantCreate>().toEqualTypeOf<domain.TenantCreate>()
    expectTypeOf<ManagementClient['createTenant']>().parameters.toEqualTypeOf<
      [body: TenantCreate, options?: { signal?: AbortSignal; headers?: Record<string, string> }]
    >()
    expectTypeOf<ManagementClient['getTenant']>().returns.resolves.toEqualTypeOf<Tenant>()
    expectTypeOf<ManagementClient['createOfferOfTenant']>().returns.resolves.toEqualTypeOf<OfferCreated>()
    expectTypeOf<ManagementClient['deleteTenant']>().returns.resolves.toEqualTypeOf<void>()
    expectTypeOf<ManagementClient['waitForSession']>().returns.resolves.toEqualTypeOf<Session>()
  })
})

describe('SDK webhook event types', () => {
  it('issue 21: the webhook event bodies of the description equal the zod schemas the services build them with', () => {
    expectTypeOf<WebhookEvent>().toEqualTypeOf<domain.WebhookEvent>()
  })

  it('issue 21: a webhook handler narrows the body by `type` and `status`', () => {
    const handle = (event: WebhookEvent): string => {
      if (event.type === 'issuance.notification') return `${event.credentialConfigurationId}: ${event.event}`
      if (event.type === 'credential.issued') return `${event.count} × ${event.format}`
      if (event.type === 'issuance.deferred') return `wait ${event.interval} s`
      if (event.type === 'issuance.expired') return event.credentialConfigurationIds.join(',')
      if (event.type === 'issuance.failed') return event.reason
      if (event.type === 'presentation.status') return event.status
      if (event.status === 'failed') return event.failureReason
      return 'claims' in event ? Object.keys(event.claims).join(',') : 'response code required'
    }
    expect(
      handle({
        type: 'presentation.result',
        tenantId: 'acme',
        sessionId: 'ses_1',
        presentationConfigId: 'pid',
        status: 'verified',
        claims: { pid: [{ given_name: 'Erika' }] },
        deliveryId: 'whd_1',
      }),
    ).toBe('pid')
  })
})

/** A reverse proxy in front of a dead upstream, as nginx answers then: an HTML 502 page. */
function startProxy(answer: (res: import('node:http').ServerResponse) => void) {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => answer(res))
  })
  return new Promise<{ server: Server; url: string }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  )
}

describe('ManagementApiError for answers that are not the API’s', () => {
  const html = '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>'
  let badGateway: { server: Server; url: string }
  let notJson: { server: Server; url: string }

  beforeAll(async () => {
    badGateway = await startProxy((res) => res.writeHead(502, { 'content-type': 'text/html' }).end(html))
    notJson = await startProxy((res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html))
  })
  afterAll(() => {
    badGateway.server.close()
    notJson.server.close()
  })

  const client = (baseUrl: string) => createManagementClient({ baseUrl, accessToken: () => 'token' })

  it('issue 13: an HTML 502 from a proxy rejects with status 502, code http_502 and the raw text', async () => {
    const error = await client(badGateway.url)
      .getTenant('acme')
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ManagementApiError)
    expect({ ...(error as ManagementApiError) }).toStrictEqual({
      name: 'ManagementApiError',
      method: 'GET',
      url: `${badGateway.url}/api/tenants/acme`,
      status: 502,
      code: 'http_502',
      problem: undefined,
      oauthError: undefined,
      body: html,
    })
  })

  it('issue 13: a 2xx answer that is not JSON rejects with code invalid_response', async () => {
    const error = await client(notJson.url)
      .listTenants()
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 200, code: 'invalid_response', body: html })
  })

  it('issue 13: no answer at all (connection refused) rejects with status 0 and code network_error', async () => {
    const closed = await startProxy(() => {})
    closed.server.close()
    const error = await client(closed.url)
      .getHealth()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ManagementApiError)
    expect(error).toMatchObject({ status: 0, code: 'network_error', body: undefined })
    expect((error as Error).cause).toBeInstanceOf(Error)
  })

  it('issue 13: a token endpoint behind the same dead proxy fails the call with the proxy’s answer', async () => {
    const error = await createManagementClient({ baseUrl: badGateway.url, clientId: 'c', clientSecret: 's' })
      .listTenants()
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 502, code: 'http_502', url: `${badGateway.url}/api/oauth2/token` })
  })

  it('issue 13: path parameters are percent-encoded, and a missing one throws before any request', async () => {
    const error = await client(badGateway.url)
      .getClient('a/b?c')
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ url: `${badGateway.url}/api/clients/a%2Fb%3Fc` })
    expect(() => client(badGateway.url).getTenant('')).toThrow(TypeError)
  })
})

describe('requestClientCredentialsToken', () => {
  it('issue 22: answers the whole token response (the roles in scope), sending id and secret as Basic', async () => {
    let seen: { authorization?: string; body: string } = { body: '' }
    const tokenServer = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      req.on('end', () => {
        seen = { authorization: req.headers.authorization, body }
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            access_token: 'a.b.c',
            token_type: 'Bearer',
            expires_in: 60,
            scope: 'key:read',
          }),
        )
      })
    })
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve))
    const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/api/oauth2/token`
    try {
      const token = await requestClientCredentialsToken({ tokenUrl, clientId: 'a:b', clientSecret: 's e' })
      expect(token).toStrictEqual({
        access_token: 'a.b.c',
        token_type: 'Bearer',
        expires_in: 60,
        scope: 'key:read',
      })
      // RFC 6749 §2.3.1: form-encoded before joined.
      expect(seen).toStrictEqual({
        authorization: `Basic ${btoa('a%3Ab:s%20e')}`,
        body: 'grant_type=client_credentials',
      })
    } finally {
      tokenServer.close()
    }
  })
})
