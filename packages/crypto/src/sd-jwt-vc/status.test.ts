import { describe, expect, it } from 'vitest'
import { statusListEntryOf } from './status'

describe('the status claim of an SD-JWT VC (TSL §6.2, F-33)', () => {
  it('is read only as {idx: non-negative integer, uri: string}; without status_list there is none', () => {
    expect(statusListEntryOf({ status_list: { idx: 3, uri: 'https://x/1' } })).toStrictEqual({
      idx: 3,
      uri: 'https://x/1',
    })
    expect(statusListEntryOf(undefined)).toBeUndefined()
    expect(statusListEntryOf({ other_mechanism: {} })).toBeUndefined()
    for (const bad of [
      { idx: -1, uri: 'u' },
      { idx: 1.5, uri: 'u' },
      { idx: '1', uri: 'u' },
      { idx: 1 },
      null,
    ])
      expect(() => statusListEntryOf({ status_list: bad })).toThrow(
        'the credential’s status_list is not {idx, uri}',
      )
  })
})
