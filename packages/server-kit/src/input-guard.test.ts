import { describe, expect, it } from 'vitest'
import { exceedsJsonDepth, findUnstorable, MAX_JSON_DEPTH } from './input-guard'

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

describe('input guard (issue 11, S-123)', () => {
  it('S-123: JSON depth is counted up to the limit, brackets inside strings and escapes ignored', () => {
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH))).toBe(false)
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1))).toBe(true)
    expect(exceedsJsonDepth(JSON.stringify({ a: '['.repeat(1000) }))).toBe(false)
    // An escaped quote does not end the string, so the brackets after it are still text.
    expect(exceedsJsonDepth(`{"a":"\\"${'{'.repeat(1000)}"}`)).toBe(false)
    expect(
      exceedsJsonDepth(`{"a":"\\\\",${'"b":{'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}}`),
    ).toBe(true)
  })

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
