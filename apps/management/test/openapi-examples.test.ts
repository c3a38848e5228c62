import { testDatabases } from '@credential-service/db-schema/testing'
import type { RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { createHarness, type Harness, type TestClient } from './harness'

interface Example {
  summary?: string
  value: unknown
}
interface Operation {
  operationId: string
  requestBody?: { content: Record<string, { examples?: Record<string, Example> }> }
}
/** The members of the issuance and presentation examples this file looks at. */
interface ExampleBody {
  config?: { format: string }
  dcqlQuery?: { credentials: { format: string }[] }
  grant?: string
  txCode?: unknown
}
interface Document {
  paths: Record<string, Record<string, Operation>>
}

const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  )

/** Fastify's `/api/x/:id` as OpenAPI writes it, `/api/x/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

// routes/docs-examples.ts: the request body examples Swagger UI shows (issue 22; issue 23 item 3).
describe.each(testDatabases())('OpenAPI request body examples on $name', (testDatabase) => {
  const routes: RouteOptions[] = []
  let h: Harness
  let live: Document
  let client: TestClient

  beforeAll(async () => {
    h = await createHarness(testDatabase, { routes })
    live = (await h.app.inject({ url: '/api/docs-json' })).json()
    client = await h.createClient(h.tenantA, [
      'key:manage',
      'issuance:config',
      'issuance:offer',
      'presentation:config',
      'presentation:request',
    ])
  })
  afterAll(() => h.close())

  /** The examples of an operation's JSON body, by name. */
  const examplesOf = (operationId: string) => {
    const found = operationsOf(live).find(({ operation }) => operation.operationId === operationId)
    if (!found) throw new Error(`no operation ${operationId}`)
    return { ...found, examples: found.operation.requestBody?.content['application/json']?.examples ?? {} }
  }

  describe('happy', () => {
    it('every operation with a request body has named examples for each media type', () => {
      const bare: string[] = []
      let bodies = 0
      for (const { method, path, operation } of operationsOf(live)) {
        for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
          bodies++
          if (Object.keys(media.examples ?? {}).length === 0) bare.push(`${method} ${path} ${type}`)
          for (const [name, example] of Object.entries(media.examples ?? {}))
            if (!example.summary) bare.push(`${method} ${path} ${type} ${name}: no summary`)
        }
      }
      expect(bare).toStrictEqual([])
      expect(bodies).toBeGreaterThanOrEqual(60)
    })

    it('every example is accepted by the zod schema its route validates the body with', () => {
      const schemas = new Map<string, z.ZodType>()
      for (const route of routes)
        for (const method of [route.method].flat())
          if (route.schema?.body)
            schemas.set(`${method} ${openApiPath(route.url)}`, route.schema.body as z.ZodType)
      const refused: string[] = []
      let parsed = 0
      for (const { method, path, operation } of operationsOf(live)) {
        for (const media of Object.values(operation.requestBody?.content ?? {})) {
          const schema = schemas.get(`${method} ${path}`)
          if (!schema) {
            refused.push(`${method} ${path}: no route body schema`)
            continue
          }
          for (const [name, example] of Object.entries(media.examples ?? {})) {
            const result = schema.safeParse(example.value)
            parsed++
            if (!result.success)
              refused.push(`${method} ${path} ${name}: ${JSON.stringify(result.error.issues)}`)
          }
        }
      }
      expect(refused).toStrictEqual([])
      expect(parsed).toBeGreaterThanOrEqual(100)
    })

    it('spec §2.1, §2.3, §4: credential configurations show an SD-JWT VC and an mdoc example, presentation configurations DCQL for both, offers both grants', () => {
      const values = (operationId: string) =>
        Object.values(examplesOf(operationId).examples).map((example) => example.value as ExampleBody)
      expect(values('createCredentialConfig').map((body) => body.config?.format)).toStrictEqual([
        'dc+sd-jwt',
        'mso_mdoc',
        'dc+sd-jwt',
      ])
      expect(
        values('createPresentationConfig').map((body) => body.dcqlQuery?.credentials.map((c) => c.format)),
      ).toStrictEqual([['dc+sd-jwt'], ['mso_mdoc'], ['dc+sd-jwt'], ['dc+sd-jwt']])
      expect(values('createOffer').map(({ grant, txCode }) => [grant, txCode !== undefined])).toStrictEqual([
        ['pre-authorized_code', true],
        ['authorization_code', false],
      ])
    })

    it('OpenID4VCI 1.0 §4.1.1, OpenID4VP 1.0 §5: the examples, sent in order, set up issuance and presentation end to end', async () => {
      // What a tenant sends to issue and ask for both credentials, each example as Swagger UI shows it.
      const steps: [operationId: string, examples: string[]][] = [
        ['createKeyChain', ['generate', 'import']],
        ['createWebhookEndpoint', ['hmac']],
        ['createAttributeProvider', ['hmac']],
        ['createLoginProvider', ['confidentialClient']],
        ['createTrustList', ['walletRoots', 'pem']],
        ['createWalletProvider', ['walletProvider']],
        ['createCredentialConfig', ['sdJwtVc', 'mdoc', 'minimal']],
        ['createPresentationConfig', ['sdJwtVc', 'mdoc', 'redirectUriPrefix']],
        ['createLoginProvider', ['presentation']],
        ['createOffer', ['preAuthorizedWithTxCode', 'authorizationCode']],
        ['createPresentationRequest', ['crossDevice', 'sameDevice', 'sameDeviceUnsigned']],
        ['signSchemaMetadata', ['fromConfiguration', 'withMembers', 'document', 'peerTs11']],
        ['signSchemaMetadataVersion', ['first']],
      ]
      const failed: string[] = []
      const answers = new Map<string, Record<string, unknown>>()
      for (const [operationId, names] of steps) {
        const { method, path, examples } = examplesOf(operationId)
        for (const name of names) {
          const example = examples[name]
          if (!example) {
            failed.push(`${operationId} has no example ${name}`)
            continue
          }
          const response = await h.app.inject({
            method: method as 'POST',
            url: path,
            headers: client.auth,
            payload: example.value as object,
          })
          if (response.statusCode < 200 || response.statusCode > 299)
            failed.push(`${operationId} ${name}: ${response.statusCode} ${response.body}`)
          else answers.set(`${operationId} ${name}`, response.json())
        }
      }
      expect(failed).toStrictEqual([])

      // The replace operations take the same examples.
      const replace = examplesOf('replaceCredentialConfig')
      const mdoc = replace.examples.mdoc?.value as { id: string }
      const replaced = await h.app.inject({
        method: 'PUT',
        url: replace.path.replace('{credentialConfigId}', mdoc.id),
        headers: client.auth,
        payload: mdoc,
      })
      expect(replaced.statusCode, replaced.body).toBe(200)

      expect(answers.get('createOffer preAuthorizedWithTxCode')).toMatchObject({
        txCode: expect.stringMatching(/^\d{6}$/),
        credentialOffer: {
          credential_configuration_ids: ['employee-badge'],
          grants: {
            'urn:ietf:params:oauth:grant-type:pre-authorized_code': {
              tx_code: { input_mode: 'numeric', length: 6 },
            },
          },
        },
      })
      expect(answers.get('createOffer authorizationCode')).toMatchObject({
        txCode: null,
        credentialOffer: {
          credential_configuration_ids: ['mobile-driving-licence'],
          grants: { authorization_code: { issuer_state: expect.any(String) } },
        },
      })
      // Issue 23 item 8: the minimal body got the tenant's default key chain, made on first need.
      expect(answers.get('createCredentialConfig minimal')?.keyChainId).toBe('default')
      // The peer's TS11 form: the schema URI took format and vct from the configuration.
      expect(answers.get('signSchemaMetadata peerTs11')?.schemaMeta).toMatchObject({
        version: '1.0.0',
        bindingType: 'key',
        schemaURIs: [
          {
            format: 'dc+sd-jwt',
            uri: 'https://credentials.example.com/schemas/employee-badge.json',
            metadata: { vct: 'https://credentials.example.com/types/employee-badge' },
          },
        ],
      })
      expect(answers.get('createPresentationRequest sameDevice')?.authorizationRequestUri).toMatch(
        /^openid4vp:\/\//,
      )
      // OpenID4VP 1.0 §5.9.3 (V-07): the redirect_uri example answers a request by value, unsigned.
      const unsigned = answers.get('createPresentationRequest sameDeviceUnsigned')
      expect(unsigned).toMatchObject({ requestUri: null, requestUriMethod: null })
      const params = new URL(String(unsigned?.authorizationRequestUri)).searchParams
      expect(params.get('client_id')).toBe(`redirect_uri:${params.get('response_uri')}`)
      expect(params.has('request_uri')).toBe(false)
    })
  })
})
