import { describe, expect, it } from 'vitest'
import {
  compareSemver,
  deriveClaimsJsonSchema,
  deriveCredentialJsonSchema,
  deriveTypeMetadata,
  zSemver,
} from '../src/index'

describe('semantic versions (semver.org 2.0.0)', () => {
  it('§11: precedence follows the specification’s example order', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.2.0',
      '1.10.0',
      '2.0.0',
      '12345678901234567890.0.0',
    ]
    for (let i = 0; i < ordered.length - 1; i++) {
      const [lower, higher] = [ordered[i] as string, ordered[i + 1] as string]
      expect(compareSemver(lower, higher), `${lower} < ${higher}`).toBeLessThan(0)
      expect(compareSemver(higher, lower), `${higher} > ${lower}`).toBeGreaterThan(0)
    }
  })

  it('§10: build metadata does not count', () => {
    expect(compareSemver('1.0.0+001', '1.0.0+20130313144700')).toBe(0)
    expect(compareSemver('1.0.0-beta+exp.sha.5114f85', '1.0.0-beta')).toBe(0)
  })

  it('§2, §9: only well-formed versions are accepted', () => {
    for (const ok of ['0.0.1', '1.0.0-0.3.7', '1.0.0-x-y-z.--', '1.0.0+21AF26D3----117B344092BD'])
      expect(zSemver.safeParse(ok).success, ok).toBe(true)
    for (const bad of ['1.0', 'v1.0.0', '01.0.0', '1.0.0-01', '1.0.0-', '1.0.0+', ''])
      expect(zSemver.safeParse(bad).success, bad).toBe(false)
  })
})

describe('type metadata of a configuration', () => {
  const config = {
    id: 'pid',
    config: {
      format: 'dc+sd-jwt' as const,
      vct: 'urn:example:pid',
      display: [{ name: 'PID', locale: 'en' }],
    },
    fields: [
      { path: ['given_name'], type: 'string' as const, mandatory: true, disclosable: true },
      { path: ['nationalities'], type: 'array' as const, display: [{ name: 'Nationality', locale: 'en' }] },
    ],
  }

  it('SD-JWT VC Type Metadata: vct, display, one claim per field with its sd, and the schema', () => {
    expect(deriveTypeMetadata(config)).toStrictEqual({
      vct: 'urn:example:pid',
      name: 'PID',
      display: [{ locale: 'en', name: 'PID' }],
      claims: [
        { path: ['given_name'], sd: 'always', mandatory: true },
        { path: ['nationalities'], display: [{ locale: 'en', label: 'Nationality' }], sd: 'never' },
      ],
      schema: deriveCredentialJsonSchema(config),
    })
  })

  it('spec §2.1: the credential schema is the claims schema with the registered claims beside it', () => {
    const claims = deriveClaimsJsonSchema(config) as { properties: Record<string, unknown> }
    const schema = deriveCredentialJsonSchema(config) as {
      properties: Record<string, unknown>
      required: string[]
      additionalProperties: boolean
    }
    expect(schema.required).toStrictEqual(['vct', 'given_name'])
    expect(schema.additionalProperties).toBe(false)
    for (const [name, claim] of Object.entries(claims.properties))
      expect(schema.properties[name]).toStrictEqual(claim)
    for (const registered of ['iss', 'vct', 'iat', 'exp', 'nbf', 'cnf', 'status', 'sub', 'vct#integrity'])
      expect(schema.properties).toHaveProperty([registered])
  })
})
