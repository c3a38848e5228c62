import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { generateSdkFiles, SDK_ROOT } from '../scripts/generate'

describe('generated SDK files', () => {
  it('issue 13: openapi.json and src/generated/* match a fresh generation (run `pnpm --filter @credential-service/sdk generate`)', async () => {
    const files = await generateSdkFiles()
    expect(Object.keys(files).sort()).toStrictEqual([
      'openapi.json',
      'src/generated/operations.ts',
      'src/generated/protocol.ts',
      'src/generated/schema.ts',
      'src/generated/types.ts',
    ])
    for (const [path, content] of Object.entries(files)) {
      // One assertion per file names the stale one; comparing booleans keeps the failure output short.
      expect(readFileSync(join(SDK_ROOT, path), 'utf8') === content, `${path} is stale`).toBe(true)
    }
  })

  it('issue 13: one client method per operationId of the description, with the same name', async () => {
    const { OPERATIONS } = await import('../src/generated/operations')
    const document = JSON.parse(readFileSync(join(SDK_ROOT, 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { operationId: string }>>
    }
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    )
    expect(Object.keys(OPERATIONS).sort()).toStrictEqual([...ids].sort())
    expect(OPERATIONS.getSessionOfTenant).toStrictEqual({
      method: 'GET',
      path: '/api/tenants/{tenantId}/sessions/{id}',
      pathParams: ['tenantId', 'id'],
      body: 'none',
      query: false,
      auth: true,
    })
  })
})
