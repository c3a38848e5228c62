import { describe, expect, it } from 'vitest'
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../src/rules/json-depth'

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

describe('JSON depth (issue 11, S-123)', () => {
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
})
