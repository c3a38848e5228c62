import { zAccessTokenRequest } from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { grants } from './registry'

describe('grant registry', () => {
  it('every grant_type the schema accepts has a grant', () => {
    const accepted = zAccessTokenRequest.options.map((option) => option.shape.grant_type.value)
    expect(Object.keys(grants).sort()).toStrictEqual(accepted.sort())
  })
})
