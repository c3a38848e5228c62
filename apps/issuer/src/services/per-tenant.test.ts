import { describe, expect, it } from 'vitest'
import { perTenant } from './per-tenant'

describe('perTenant', () => {
  it('builds once per tenant and keeps tenants apart', () => {
    const calls: string[] = []
    const service = perTenant((tenantId) => {
      calls.push(tenantId)
      return { tenantId }
    })
    expect(service('a')).toBe(service('a'))
    expect(service('b').tenantId).toBe('b')
    expect(calls).toEqual(['a', 'b'])
  })

  it('stays bounded: unknown tenant ids from URLs cannot grow it without limit', () => {
    let builds = 0
    const service = perTenant(() => ({ build: ++builds }), 3)
    for (const id of ['a', 'b', 'c', 'd']) service(id)
    // Full at 'd': cleared, so 'a' is built again.
    expect(service('a').build).toBe(5)
  })
})
