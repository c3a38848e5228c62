import { describe, expect, it } from 'vitest'
import { applyMetadataPolicy, MetadataPolicyError, resolveMetadataPolicy } from './metadata-policy'

// OpenID Federation 1.0 §6.1.5, the specification's own example: the trust anchor's and the
// intermediate's policies for RPs, the intermediate's metadata and the leaf's RP metadata.
const anchorPolicy = {
  openid_relying_party: {
    grant_types: {
      default: ['authorization_code'],
      subset_of: ['authorization_code', 'refresh_token'],
      superset_of: ['authorization_code'],
    },
    token_endpoint_auth_method: {
      one_of: ['private_key_jwt', 'self_signed_tls_client_auth'],
      essential: true,
    },
    token_endpoint_auth_signing_alg: { one_of: ['PS256', 'ES256'] },
    subject_type: { value: 'pairwise' },
    contacts: { add: ['helpdesk@federation.example.org'] },
  },
}
const intermediatePolicy = {
  openid_relying_party: {
    grant_types: { subset_of: ['authorization_code'] },
    token_endpoint_auth_method: { one_of: ['self_signed_tls_client_auth'] },
    contacts: { add: ['helpdesk@org.example.org'] },
  },
}
const leafMetadata = {
  openid_relying_party: {
    redirect_uris: ['https://rp.example.org/callback'],
    response_types: ['code'],
    token_endpoint_auth_method: 'self_signed_tls_client_auth',
    contacts: ['rp_admins@rp.example.org'],
    // The intermediate's `metadata` for its subordinates, applied before the policy (§6.1.4.2).
    sector_identifier_uri: 'https://org.example.org/sector-ids.json',
    policy_uri: 'https://org.example.org/policy.html',
  },
}

describe('OpenID Federation 1.0 §6.1 metadata policy', () => {
  it('§6.1.5 example: the merged policy of the anchor and the intermediate is the one the specification shows', () => {
    expect(resolveMetadataPolicy([anchorPolicy, intermediatePolicy])).toStrictEqual({
      openid_relying_party: {
        grant_types: {
          default: ['authorization_code'],
          subset_of: ['authorization_code'],
          superset_of: ['authorization_code'],
        },
        token_endpoint_auth_method: { one_of: ['self_signed_tls_client_auth'], essential: true },
        token_endpoint_auth_signing_alg: { one_of: ['PS256', 'ES256'] },
        subject_type: { value: 'pairwise' },
        contacts: { add: ['helpdesk@federation.example.org', 'helpdesk@org.example.org'] },
      },
    })
  })

  it('§6.1.5 example: the resolved RP metadata is the one the specification shows', () => {
    const policy = resolveMetadataPolicy([anchorPolicy, intermediatePolicy])
    expect(applyMetadataPolicy(leafMetadata, policy)).toStrictEqual({
      openid_relying_party: {
        redirect_uris: ['https://rp.example.org/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'self_signed_tls_client_auth',
        subject_type: 'pairwise',
        sector_identifier_uri: 'https://org.example.org/sector-ids.json',
        policy_uri: 'https://org.example.org/policy.html',
        contacts: ['rp_admins@rp.example.org', 'helpdesk@federation.example.org', 'helpdesk@org.example.org'],
      },
    })
  })

  it('§6.1.3.1.8 table: essential and subset_of over present, disjoint and absent parameters', () => {
    const run = (essential: boolean, input: string[] | undefined) =>
      applyMetadataPolicy(
        { t: input === undefined ? {} : { p: input } },
        resolveMetadataPolicy([{ t: { p: { essential, subset_of: ['a', 'b', 'c'] } } }]),
      ).t
    expect(run(true, ['a', 'e'])).toStrictEqual({ p: ['a'] })
    expect(run(false, ['a', 'e'])).toStrictEqual({ p: ['a'] })
    expect(run(true, ['d', 'e'])).toStrictEqual({ p: [] })
    expect(run(false, ['d', 'e'])).toStrictEqual({ p: [] })
    expect(() => run(true, undefined)).toThrow(MetadataPolicyError)
    expect(run(false, undefined)).toStrictEqual({})
  })

  it('§6.1.3.1.1 value: null removes the parameter; two different values do not merge', () => {
    const policy = resolveMetadataPolicy([{ t: { p: { value: null } } }])
    expect(applyMetadataPolicy({ t: { p: 'x', q: 1 } }, policy)).toStrictEqual({ t: { q: 1 } })
    expect(() => resolveMetadataPolicy([{ t: { p: { value: 'a' } } }, { t: { p: { value: 'b' } } }])).toThrow(
      /two different value values/,
    )
  })

  it('§6.1.3.1.4 one_of: a value outside the list is refused; an empty merge is a policy error', () => {
    const policy = resolveMetadataPolicy([{ t: { alg: { one_of: ['ES256'] } } }])
    expect(() => applyMetadataPolicy({ t: { alg: 'RS256' } }, policy)).toThrow(/not one of/)
    expect(() =>
      resolveMetadataPolicy([{ t: { p: { one_of: ['a'] } } }, { t: { p: { one_of: ['b'] } } }]),
    ).toThrow(/one_of values are empty/)
  })

  it('§6.1.3.1.6 superset_of: metadata lacking a required value is refused', () => {
    const policy = resolveMetadataPolicy([{ t: { p: { superset_of: ['a', 'b'] } } }])
    expect(() => applyMetadataPolicy({ t: { p: ['a'] } }, policy)).toThrow(/does not contain/)
  })

  it('§6.1.3: combinations the operators do not allow are policy errors, also after a merge', () => {
    expect(() => resolveMetadataPolicy([{ t: { p: { value: 'x', one_of: ['y'] } } }])).toThrow(/among one_of/)
    expect(() => resolveMetadataPolicy([{ t: { p: { one_of: ['a'], subset_of: ['a'] } } }])).toThrow(
      /one_of cannot be combined/,
    )
    // A subordinate cannot loosen a superior: its add outside the superior's subset_of fails the merge.
    expect(() =>
      resolveMetadataPolicy([{ t: { p: { subset_of: ['a'] } } }, { t: { p: { add: ['b'] } } }]),
    ).toThrow(/add must be a subset of subset_of/)
    expect(() => resolveMetadataPolicy([{ t: { p: { value: null, essential: true } } }])).toThrow(
      /null value/,
    )
  })

  it('§6.1.3.2: an unknown operator is ignored unless named in metadata_policy_crit', () => {
    expect(resolveMetadataPolicy([{ t: { p: { regexp: '^a' } } }])).toStrictEqual({ t: { p: {} } })
    expect(() => resolveMetadataPolicy([{ t: { p: { regexp: '^a' } } }], ['regexp'])).toThrow(
      /critical operator/,
    )
  })

  it('§6.1.3.1.8: scope is handled as an array of space-separated values', () => {
    const policy = resolveMetadataPolicy([{ t: { scope: { subset_of: ['openid', 'email'] } } }])
    expect(applyMetadataPolicy({ t: { scope: 'openid profile email' } }, policy)).toStrictEqual({
      t: { scope: 'openid email' },
    })
  })
})
