import { WEBHOOK_EVENT_TYPES } from '@credential-service/core-domain'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeManagementApi } from '../src/describe-api'
import { createHarness, type Harness } from './harness'

interface Schema {
  $ref?: string
  anyOf?: Schema[]
  type?: string
}
interface Operation {
  operationId?: string
  requestBody?: { content: Record<string, { schema: Schema }> }
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>
}
interface WebhookPost {
  parameters: { in: string; name: string }[]
}
interface Document {
  servers: unknown
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}

const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      where: `${method.toUpperCase()} ${path}`,
      operation,
    })),
  )

/** A `$ref` to a component, or an optional body: `anyOf` of such a `$ref` and `null`. */
const isNamed = (schema: Schema): boolean =>
  schema.$ref?.startsWith('#/components/schemas/') === true ||
  (schema.anyOf?.every((member) => isNamed(member) || member.type === 'null') === true &&
    schema.anyOf.some(isNamed))

describe('OpenAPI description of the management API', () => {
  let harness: Harness
  let live: Document

  beforeAll(async () => {
    harness = await createHarness(testDatabases()[0] as TestDatabase)
    live = (await harness.app.inject({ url: '/api/docs-json' })).json()
  })
  afterAll(() => harness.close())

  it('issue 13: every operation has an operationId, and no two share one', () => {
    const ids = operationsOf(live).map(
      ({ where, operation }) => operation.operationId ?? `missing on ${where}`,
    )
    expect(ids.filter((id) => id.startsWith('missing'))).toStrictEqual([])
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.length).toBeGreaterThanOrEqual(83)
  })

  it('issue 13: no request body or 2xx answer is an anonymous inline schema; each is a $ref to components', () => {
    const inline: string[] = []
    for (const { where, operation } of operationsOf(live)) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}))
        if (!isNamed(media.schema)) inline.push(`${where} body ${type}`)
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {}))
          if (!isNamed(media.schema)) inline.push(`${where} ${status} ${type}`)
      }
    }
    expect(inline).toStrictEqual([])
  })

  it('issue 13: every component is used by some operation, and every $ref resolves', () => {
    const text = JSON.stringify({ ...live, components: undefined })
    const components = JSON.stringify(live.components)
    const refs = [...`${text}${components}`.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1])
    expect([...new Set(refs)].filter((name) => !((name as string) in live.components.schemas))).toStrictEqual(
      [],
    )
    expect(Object.keys(live.components.schemas).filter((name) => !refs.includes(name))).toStrictEqual([])
  })

  it('spec §2.2, §2.3, §9.2: the spec’s type names are components; the removed 4.x types are not', () => {
    const names = Object.keys(live.components.schemas)
    expect(names).toEqual(
      expect.arrayContaining([
        'ClaimFieldDefinitionDto',
        'FieldDisplayDto',
        'IssuerMetadataCredentialConfig',
        'CredentialConfig',
        'PresentationConfig',
        'KeyChain',
        'Client',
        'Tenant',
        'Session',
        'Problem',
      ]),
    )
    for (const removed of ['ClaimMetadata', 'ClaimDisplayInfo', 'SchemaResponse'])
      expect(names).not.toContain(removed)
    const field = live.components.schemas.ClaimFieldDefinitionDto as { properties: Record<string, Schema> }
    expect(field.properties.display).toStrictEqual({
      type: 'array',
      maxItems: 50,
      items: { $ref: '#/components/schemas/FieldDisplay' },
    })
    expect(
      live.paths['/api/tenants/{tenantId}/credentials']?.post?.requestBody?.content['application/json']
        ?.schema,
    ).toStrictEqual({ $ref: '#/components/schemas/CredentialConfigDefinition' })
    expect(live.paths['/api/tenants/{tenantId}/credentials']?.post?.responses['201']?.content).toStrictEqual({
      'application/json': { schema: { $ref: '#/components/schemas/CredentialConfig' } },
    })
  })

  it('RFC 9457 §3: problem answers are described as application/problem+json, OAuth errors as application/json', () => {
    const errors = live.paths['/api/tenants/{tenantId}/credentials']?.post?.responses['400']?.content
    expect(errors).toStrictEqual({
      'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
    })
    const oauth = live.paths['/api/oauth2/token']?.post?.responses['400']?.content
    expect(Object.keys(oauth ?? {})).toStrictEqual(['application/json'])
    const summaries = Object.values(live.paths).flatMap((operations) =>
      Object.values(operations ?? {}).map((operation) => (operation as { summary?: string }).summary ?? ''),
    )
    expect(summaries.filter((summary) => /\ba [aeiou]/i.test(summary))).toStrictEqual([])
  })

  it('issue 12: the protocol settings of a stored credential configuration are described; login and wallet provider operations describe secrets and trust anchors', () => {
    const stored = live.components.schemas.CredentialConfig as {
      properties: Record<string, { description?: string }>
    }
    const undescribed = [
      'lifetimeSeconds',
      'keyBinding',
      'statusManagement',
      'batchSize',
      'userAuthentication',
      'refreshTokens',
      'dpop',
      'walletAttestation',
    ].filter((name) => !stored.properties[name]?.description)
    expect(undescribed).toStrictEqual([])
    const text = (path: string, method: string) => {
      const operation = live.paths[path]?.[method] as { summary?: string; description?: string } | undefined
      return `${operation?.summary ?? ''}\n${operation?.description ?? ''}`
    }
    const login = text('/api/login-providers/{loginProviderId}', 'put')
    for (const needle of [
      'hasClientSecret',
      'never returned',
      '/authorize/callback',
      'body.clientSecret',
      '`null`',
    ])
      expect(login).toContain(needle)
    const wallet = text('/api/wallet-providers', 'post')
    for (const needle of ['trustAnchors', 'x5c', 'body.trustAnchors.<index>'])
      expect(wallet).toContain(needle)
    expect(text('/api/wallet-providers/{walletProviderId}', 'delete')).toContain('never refused')
    expect(text('/api/login-providers/{loginProviderId}', 'delete')).toContain('409')
    const api = (live as unknown as { info: { description: string } }).info.description
    for (const endpoint of [
      '`par`',
      '`authorize/callback`',
      '`deferred-credential`',
      '`jwks`',
      '`crl/{keyChainId}`',
    ])
      expect(api).toContain(endpoint)
  })

  it('issue 21: each webhook event type is an OpenAPI 3.1 webhook whose body is a named schema, with the signature headers', () => {
    const webhooks = (live as unknown as { webhooks: Record<string, { post: Operation & WebhookPost }> })
      .webhooks
    expect(Object.keys(webhooks).sort()).toStrictEqual([...WEBHOOK_EVENT_TYPES].sort())
    const bodies = Object.fromEntries(
      Object.entries(webhooks).map(([type, item]) => [
        type,
        item.post.requestBody?.content['application/json']?.schema,
      ]),
    )
    expect(bodies).toStrictEqual({
      'credential.issued': { $ref: '#/components/schemas/CredentialIssuedEvent' },
      'issuance.deferred': { $ref: '#/components/schemas/IssuanceDeferredEvent' },
      'issuance.expired': { $ref: '#/components/schemas/IssuanceExpiredEvent' },
      'issuance.failed': { $ref: '#/components/schemas/IssuanceFailedEvent' },
      'issuance.notification': { $ref: '#/components/schemas/IssuanceNotificationEvent' },
      'presentation.result': { $ref: '#/components/schemas/PresentationResultEvent' },
      'presentation.status': { $ref: '#/components/schemas/PresentationStatusEvent' },
    })
    for (const item of Object.values(webhooks))
      expect(item.post.parameters.map((p) => `${p.in} ${p.name}`)).toStrictEqual([
        'header X-Timestamp',
        'header X-Signature',
        'header webhook-id',
        'header webhook-timestamp',
        'header webhook-signature',
      ])
    expect(live.components.schemas.PresentationResultEvent).toMatchObject({
      anyOf: [
        { $ref: '#/components/schemas/PresentationVerifiedEvent' },
        { $ref: '#/components/schemas/PresentationVerifiedResponseCodeEvent' },
        { $ref: '#/components/schemas/PresentationFailedEvent' },
      ],
    })
    const notification = live.components.schemas.IssuanceNotificationEvent as { required: string[] }
    expect(notification.required).toEqual(expect.arrayContaining(['type', 'deliveryId', 'at', 'event']))
  })

  it('issue 42 item 6: a top-level tags list (OpenAPI 3.1 §4.8.1) names every tag in use, each once, with a description, and no unused one', () => {
    const document = live as unknown as { tags: { name: string; description: string }[] }
    const used = new Set<string>()
    for (const item of Object.values(live.paths ?? {}))
      for (const operation of Object.values(item as Record<string, { tags?: string[] }>))
        for (const tag of operation.tags ?? []) used.add(tag)
    for (const item of Object.values(
      (live as unknown as { webhooks: Record<string, { post: { tags?: string[] } }> }).webhooks,
    ))
      for (const tag of item.post.tags ?? []) used.add(tag)
    const listed = document.tags.map((tag) => tag.name)
    expect(new Set(listed).size).toBe(listed.length)
    expect([...listed].sort()).toStrictEqual([...used].sort())
    for (const tag of document.tags) expect(tag.description.length).toBeGreaterThan(0)
  })

  it('issue 13: the database-free description the SDK is generated from equals the served one', async () => {
    const described = (await describeManagementApi()) as unknown as Document
    expect({ ...described, servers: undefined }).toStrictEqual({ ...live, servers: undefined })
  })
})
