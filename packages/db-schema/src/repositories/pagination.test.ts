import { InvalidInputError } from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { decodeCursor, encodeCursor, toPage } from './pagination'

const refused = (cursor: string, list = 'clients') => {
  try {
    decodeCursor(cursor, list)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return (error as InvalidInputError).issues.map((issue) => issue.path)
  }
  throw new Error(`cursor ${cursor} was accepted`)
}

describe('pagination cursors (issue 11, S-12)', () => {
  it('a cursor decodes to the last id of the page in the list that handed it out', () => {
    const page = toPage(
      'clients',
      ['a', 'b', 'c'],
      2,
      (row) => row,
      (row) => row,
    )
    expect(page.items).toStrictEqual(['a', 'b'])
    expect(decodeCursor(page.nextCursor as string, 'clients')).toBe('b')
    expect(decodeCursor(undefined, 'clients')).toBeUndefined()
    expect(
      toPage(
        'clients',
        ['a'],
        2,
        (row) => row,
        (row) => row,
      ).nextCursor,
    ).toBeNull()
  })

  it('garbage, non-canonical base64url, another list, and NUL or lone surrogates inside are invalid_input', () => {
    expect(refused('AAAA')).toStrictEqual(['query.cursor'])
    expect(refused('!!!!')).toStrictEqual(['query.cursor'])
    expect(refused(`${encodeCursor('clients', 'a')}=`)).toStrictEqual(['query.cursor'])
    expect(refused(encodeCursor('tenants', 'a'))).toStrictEqual(['query.cursor'])
    expect(refused(encodeCursor('clients', 'a\u0000'))).toStrictEqual(['query.cursor'])
    expect(refused(Buffer.from('["clients","\\ud800"]').toString('base64url'))).toStrictEqual([
      'query.cursor',
    ])
    expect(refused(Buffer.from('["clients"]').toString('base64url'))).toStrictEqual(['query.cursor'])
  })
})
