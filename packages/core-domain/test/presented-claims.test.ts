import { describe, expect, it } from 'vitest'
import type { ClaimField } from '../src/contract/credential-config'
import { mapPresentedClaims, queriesDisclosing } from '../src/rules/presented-claims'

/** OpenID4VP 1.0 §7.1 selection, as the issuer passes it in (crypto's selectClaims). */
function select(root: unknown, path: (string | number | null)[]): unknown[] | undefined {
  let selected: unknown[] = [root]
  for (const part of path) {
    selected = selected.flatMap((node) => {
      if (part === null) return Array.isArray(node) ? node : []
      if (typeof part === 'number') return Array.isArray(node) && part < node.length ? [node[part]] : []
      return node && typeof node === 'object' && !Array.isArray(node) && part in node
        ? [(node as Record<string, unknown>)[part]]
        : []
    })
  }
  return selected.length ? selected : undefined
}

const field = (path: string[], type: ClaimField['type'] = 'string', namespace?: string): ClaimField =>
  ({ path, type, mandatory: false, disclosable: true, ...(namespace ? { namespace } : {}) }) as ClaimField

describe('issue 26: presented claims fill a credential (presentation during issuance)', () => {
  it('maps SD-JWT and mdoc claims paths to fields; a dotted string is a path; the first credential holding a path wins', () => {
    const fields = [
      field(['family_name'], 'string', 'org.iso.18013.5.1'),
      field(['birth_date'], 'date', 'org.iso.18013.5.1'),
      field(['town']),
      field(['nationalities'], 'array'),
    ]
    const presented = {
      pid: [{ family_name: 'Mustermann', birthdate: '1984-01-26', address: { locality: 'Berlin' } }],
      mdl: [{ 'eu.europa.ec.eudi.pid.1': { nationality: ['DE', 'AT'], family_name: 'Other' } }],
    }
    const claims = mapPresentedClaims(
      fields,
      {
        'org.iso.18013.5.1.family_name': ['family_name'],
        'org.iso.18013.5.1.birth_date': 'birthdate',
        town: 'address.locality',
        nationalities: ['eu.europa.ec.eudi.pid.1', 'nationality', null],
      },
      presented,
      select,
    )
    expect(claims).toStrictEqual({
      'org.iso.18013.5.1': { family_name: 'Mustermann', birth_date: '1984-01-26' },
      town: 'Berlin',
      nationalities: ['DE', 'AT'],
    })
  })

  it('a path the presentation lacks leaves its field out (validation of mandatory fields decides)', () => {
    const claims = mapPresentedClaims([field(['x'])], { x: ['missing'] }, { pid: [{ other: 1 }] }, select)
    expect(claims).toStrictEqual({})
  })

  it('OpenID4VP 1.0 §6.3: a query discloses a path when one of its claims selects it or a parent of it; a query without claims discloses all', () => {
    const query = {
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt' as const,
          meta: { vct_values: ['urn:eudi:pid:1'] },
          claims: [{ path: ['address'] }, { path: ['nationalities', null] }],
        },
      ],
    }
    expect(queriesDisclosing(query, ['address', 'locality']).map((q) => q.id)).toStrictEqual(['pid'])
    expect(queriesDisclosing(query, ['nationalities', 0]).map((q) => q.id)).toStrictEqual(['pid'])
    expect(queriesDisclosing(query, ['family_name'])).toStrictEqual([])
    const all = { credentials: [{ ...query.credentials[0], claims: undefined }] }
    expect(queriesDisclosing(all as never, ['anything']).length).toBe(1)
  })
})
