/**
 * The description integrators read (and this SDK is generated from; generated.test.ts keeps it
 * equal to the served one) passes a standard OpenAPI linter, Redocly's `recommended` rules, the
 * engine of `@redocly/cli lint` (issue 23 item 3): no error, and only the warnings listed here,
 * each with the reason it stays.
 */
import { readFileSync } from 'node:fs'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { describe, expect, it } from 'vitest'

const source = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')

/** Accepted warnings: rule, where (JSON pointer), and why. */
const EXPLAINED = [
  // Public, read-only documents (RFC 7517, RFC 8414, health): no request they take can be refused.
  { rule: 'operation-4xx-response', at: '#/paths/~1api~1oauth2~1jwks/get/responses' },
  {
    rule: 'operation-4xx-response',
    at: '#/paths/~1api~1.well-known~1oauth-authorization-server/get/responses',
  },
  { rule: 'operation-4xx-response', at: '#/paths/~1api~1health/get/responses' },
]

describe("the OpenAPI description against Redocly's recommended rules", () => {
  it('has no error, and no warning but the explained ones', async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config })
    const found = problems.map((problem) => ({
      severity: problem.severity,
      rule: problem.ruleId,
      at: problem.location[0]?.pointer,
      message: problem.message,
    }))
    expect(found.filter((p) => p.severity === 'error')).toStrictEqual([])
    expect(found.map(({ rule, at }) => ({ rule, at }))).toStrictEqual(EXPLAINED)
  })

  it('declares every role as a scope, and every operation says what it needs (a role, or nothing)', () => {
    const document = JSON.parse(source)
    const scopes = document.components.securitySchemes.oauth2.flows.clientCredentials.scopes
    const operations = [
      ...Object.values(document.paths as Record<string, Record<string, { security?: unknown }>>),
      ...Object.values(document.webhooks as Record<string, Record<string, { security?: unknown }>>),
    ].flatMap((item) => Object.values(item))
    for (const operation of operations) {
      const security = operation.security as Array<Record<string, string[]>> | undefined
      expect(security).toBeDefined()
      for (const requirement of security ?? [])
        for (const role of requirement.oauth2 ?? []) expect(Object.keys(scopes)).toContain(role)
    }
    const publicOperations = Object.entries(
      document.paths as Record<string, Record<string, { security?: unknown[] }>>,
    )
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))
      .filter(({ op }) => op.security?.length === 0)
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
    expect(publicOperations.sort()).toStrictEqual(
      [
        'GET /api/.well-known/oauth-authorization-server',
        'GET /api/health',
        'GET /api/oauth2/jwks',
        'POST /api/oauth2/token',
      ].sort(),
    )
  })
})
