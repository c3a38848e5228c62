import { tenantChanged } from '@credential-service/db-schema'
import { describe, expect, it } from 'vitest'
import { createTenantMemo } from './tenant-memo'

describe('createTenantMemo', () => {
  const counting = () => {
    const reads: string[] = []
    let fail = false
    const load = async (tenantId: string) => {
      reads.push(tenantId)
      if (fail) throw new Error('database down')
      return { tenantId, ids: ['a'], read: reads.length }
    }
    return { reads, load, failNext: (value: boolean) => (fail = value) }
  }

  it('reads a tenant once for concurrent callers and keeps it until an audited change drops it', async () => {
    const { reads, load } = counting()
    const memo = createTenantMemo(load)
    const tenant = `t-${crypto.randomUUID()}`
    const [first, second] = await Promise.all([memo.get(tenant), memo.get(tenant)])
    expect(first).toBe(second)
    expect(await memo.get(tenant)).toBe(first)
    expect(reads).toStrictEqual([tenant])
    tenantChanged(tenant)
    expect((await memo.get(tenant)).read).toBe(2)
  })

  it('a failed read is not kept; a miss re-reads at most every 100 ms', async () => {
    const { reads, load, failNext } = counting()
    const memo = createTenantMemo(load)
    const tenant = `t-${crypto.randomUUID()}`
    failNext(true)
    await expect(memo.get(tenant)).rejects.toThrow('database down')
    failNext(false)
    expect((await memo.get(tenant)).read).toBe(2)
    const pick = (value: { ids: string[] }) => value.ids.find((id) => id === 'missing')
    expect(await memo.find(tenant, pick)).toBeUndefined()
    expect(await memo.find(tenant, pick)).toBeUndefined()
    expect(reads).toHaveLength(2)
    await new Promise((resolve) => setTimeout(resolve, 110))
    expect(await memo.find(tenant, pick)).toBeUndefined()
    expect(reads).toHaveLength(3)
  })

  it('keeps at most maxTenants, dropping the oldest read, and re-reads after the TTL', async () => {
    const { reads, load } = counting()
    const memo = createTenantMemo(load, { maxTenants: 2, ttlMs: 50 })
    for (const tenant of ['a', 'b', 'c']) await memo.get(tenant)
    await memo.get('c')
    await memo.get('a')
    expect(reads).toStrictEqual(['a', 'b', 'c', 'a'])
    await new Promise((resolve) => setTimeout(resolve, 60))
    await memo.get('a')
    expect(reads).toStrictEqual(['a', 'b', 'c', 'a', 'a'])
  })
})
