import { MAX_JSON_DEPTH } from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { findUnstorable } from './input-guard'

describe('input guard (issue 11, S-123)', () => {
  it('S-12: NUL and lone surrogates are found in values and keys, at their path; pairs are fine', () => {
    expect(findUnstorable({ a: ['ok', '😀', { b: 'x\u0000' }] }, 'body')).toStrictEqual({
      path: 'body.a.2.b',
      message: 'contains a NUL character',
    })
    expect(findUnstorable({ a: '\ud800' }, 'body')).toStrictEqual({
      path: 'body.a',
      message: 'contains a lone UTF-16 surrogate',
    })
    expect(findUnstorable({ a: { 'k\u0000': 1 } }, 'query')).toStrictEqual({
      path: 'query.a',
      message: 'has a key that contains a NUL character',
    })
    expect(findUnstorable({ a: ['\ud83d\ude00', 1, null, true] }, 'body')).toBeUndefined()
    expect(findUnstorable(undefined, 'body')).toBeUndefined()
  })

  it('S-123: a parsed value nested beyond the limit is refused without recursing further', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(findUnstorable(deep, 'body')?.message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`)
  })
})
