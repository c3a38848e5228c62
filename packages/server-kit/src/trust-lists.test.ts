import type { TrustListRow } from '@credential-service/db-schema'
import { describe, expect, it } from 'vitest'
import { trustListCertificates } from './issuer-anchors'

const now = new Date('2026-06-01T12:00:00Z')
const at = (offsetSeconds: number) => new Date(now.getTime() + offsetSeconds * 1000)

function row(id: string, overrides: Partial<TrustListRow> = {}): TrustListRow {
  return {
    tenantId: 't',
    id,
    description: null,
    source: {
      type: 'etsi-tl',
      url: 'https://lists.example/tl.xml',
      signerCertificates: ['s'],
      refreshSeconds: 3600,
    },
    graceSeconds: 600,
    certificates: [`cert-of-${id}`],
    listIssuedAt: at(-86_400),
    nextUpdate: at(3600),
    fetchedAt: at(-60),
    lastError: null,
    lastErrorAt: null,
    nextRefreshAt: at(3000),
    createdAt: at(-86_400),
    updatedAt: at(-86_400),
    ...overrides,
  }
}

describe('the certificates trust lists contribute', () => {
  it('takes only the named lists, and of those only the current ones (fail closed past NextUpdate + grace)', () => {
    const lists = [
      row('named'),
      row('not-named'),
      row('in-grace', { nextUpdate: at(-599) }),
      row('expired', { nextUpdate: at(-601) }),
      row('pending', { fetchedAt: null, certificates: [] }),
      row('given', { source: { type: 'pem', certificates: ['p'] }, nextUpdate: null, fetchedAt: null }),
    ]
    const result = trustListCertificates(
      lists,
      ['named', 'in-grace', 'expired', 'pending', 'given', 'gone'],
      now,
    )
    expect(result.certificates).toEqual(['cert-of-named', 'cert-of-in-grace', 'cert-of-given'])
    expect(result.unusable).toEqual(["'expired' (past NextUpdate + grace)", "'pending' (not fetched yet)"])
  })

  it('contributes nothing when the configuration names no list', () => {
    expect(trustListCertificates([row('named')], undefined, now)).toEqual({ certificates: [], unusable: [] })
  })
})
