import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import { anchorsTrustListId } from '@credential-service/db-schema'
import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const dcqlQuery = {
  credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:pid'] } }],
}

async function root(subject: string) {
  const keys = await generateKeyPair('ES256')
  return createCertificate({
    subjectPublicJwk: keys.publicJwk,
    subject,
    issuerPrivateJwk: keys.privateJwk,
    validityDays: 30,
    ca: true,
  })
}

describe.each(testDatabases())(
  'issue 25: the trustAnchors shorthand becomes a pem trust list on $name',
  (testDatabase) => {
    let h: Harness
    let admin: TestClient
    beforeAll(async () => {
      h = await createHarness(testDatabase)
      admin = await h.createClient(h.tenantA, ['presentation:config', 'issuance:config', 'key:manage'])
      const chain = await call('POST', '/api/key-chains', { source: 'generate', id: 'keys' })
      expect(chain.statusCode, chain.body).toBe(201)
    }, 120_000)
    afterAll(() => h.close())

    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      h.app.inject({ method, url, headers: admin.auth, ...(payload ? { payload: payload as object } : {}) })
    const presentation = (id: string, extra: Record<string, unknown>) => ({
      id,
      dcqlQuery,
      keyChainId: 'keys',
      ...extra,
    })

    it('create and replace store only trustListIds; one set is one list, deletable once nothing names it', async () => {
      const [one, two] = [await root('CN=One'), await root('CN=Two')]
      const listId = anchorsTrustListId([one, two])
      const [a, b] = [random('pc'), random('pc')]
      const created = await call('POST', '/api/presentations', presentation(a, { trustAnchors: [one, two] }))
      expect(created.statusCode, created.body).toBe(201)
      expect(created.json().trustListIds).toStrictEqual([listId])
      expect(created.json().trustAnchors).toBeUndefined()
      const list = (await call('GET', `/api/trust-lists/${listId}`)).json()
      expect(list).toMatchObject({
        source: { type: 'pem', certificates: [one.trim(), two.trim()].sort() },
        status: { state: 'current', certificateCount: 2 },
      })
      // The same set, in another order, on another configuration: the same list, created once.
      const second = await call(
        'POST',
        '/api/presentations',
        presentation(b, { trustAnchors: [`${two}\n`, one] }),
      )
      expect(second.json().trustListIds).toStrictEqual([listId])
      const audited = await queryRows<{ action: string; actor_client_id: string }>(
        h.database.db,
        sql`select action, actor_client_id from audit_log
          where tenant_id = ${h.tenantA} and resource_type = 'trust-list' and resource_id = ${listId}`,
      )
      expect(audited).toStrictEqual([{ action: 'create', actor_client_id: admin.clientId }])
      // Replace: anchors next to named lists are appended once.
      const replaced = await call(
        'PUT',
        `/api/presentations/${a}`,
        presentation(a, { trustListIds: [listId], trustAnchors: [one, two] }),
      )
      expect(replaced.statusCode, replaced.body).toBe(200)
      expect(replaced.json().trustListIds).toStrictEqual([listId])
      expect((await call('DELETE', `/api/trust-lists/${listId}`)).statusCode).toBe(409)
      for (const id of [a, b])
        expect((await call('PUT', `/api/presentations/${id}`, presentation(id, {}))).statusCode).toBe(200)
      expect((await call('DELETE', `/api/trust-lists/${listId}`)).statusCode).toBe(204)
    })

    it('a wallet provider given trustAnchors next to trustListIds names both lists', async () => {
      const [listed, given] = [await root('CN=Listed'), await root('CN=Given')]
      const named = random('tl')
      expect(
        (
          await call('POST', '/api/trust-lists', {
            id: named,
            source: { type: 'pem', certificates: [listed] },
          })
        ).statusCode,
      ).toBe(201)
      const id = random('wp')
      const created = await call('POST', '/api/wallet-providers', {
        id,
        name: 'W',
        trustListIds: [named],
        trustAnchors: [given],
      })
      expect(created.statusCode, created.body).toBe(201)
      expect(created.json().trustListIds).toStrictEqual([named, anchorsTrustListId([given])])
    })

    it('a certificate that does not parse is a 422 naming it; nothing is created', async () => {
      const good = await root('CN=Good')
      const response = await call(
        'POST',
        '/api/presentations',
        presentation(random('pc'), { trustAnchors: [good, 'nope'] }),
      )
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.trustAnchors.1', message: 'not a valid PEM X.509 certificate' },
      ])
      expect((await call('GET', `/api/trust-lists/${anchorsTrustListId([good, 'nope'])}`)).statusCode).toBe(
        404,
      )
    })

    it('a list anchors-<hash> edited to other certificates is not widened silently: 422 naming trustAnchors', async () => {
      const [mine, other] = [await root('CN=Mine'), await root('CN=Other')]
      const listId = anchorsTrustListId([mine])
      expect(
        (await call('POST', '/api/presentations', presentation(random('pc'), { trustAnchors: [mine] })))
          .statusCode,
      ).toBe(201)
      const edited = await call('PUT', `/api/trust-lists/${listId}`, {
        id: listId,
        source: { type: 'pem', certificates: [mine, other] },
      })
      expect(edited.statusCode, edited.body).toBe(200)
      const response = await call(
        'POST',
        '/api/presentations',
        presentation(random('pc'), { trustAnchors: [mine] }),
      )
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        {
          path: 'body.trustAnchors',
          message: `trust list '${listId}' exists with other certificates; name a trust list in trustListIds instead`,
        },
      ])
    })
  },
)
