import { z } from 'zod'
import { zTimestamp } from './common'
import { zKeyChainId } from './key-chain'

/** An OpenID Federation entity identifier (§1.2): an https URL without query or fragment. */
export const zEntityId = z
  .url()
  .max(2000)
  .refine(
    (value) => !value.includes('?') && !value.includes('#'),
    'an entity identifier has no query or fragment',
  )
  .describe('OpenID Federation entity identifier (a URL)')

const zCompactJws = z
  .string()
  .max(50_000)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a compact JWS')

const zPublicJwk = z
  .record(z.string(), z.unknown())
  .refine((jwk) => typeof jwk.kty === 'string' && typeof jwk.kid === 'string', 'a JWK with kty and kid')
  .refine((jwk) => !('d' in jwk) && !('p' in jwk) && !('k' in jwk), 'a public key (no private members)')

export const zFederationAnchor = z
  .object({
    entityId: zEntityId.describe('The trust anchor’s entity identifier'),
    jwks: z
      .object({ keys: z.array(zPublicJwk).min(1).max(20) })
      .strict()
      .describe(
        'The trust anchor’s federation keys (a JWK Set), obtained out of band (OpenID Federation 1.0 §4)',
      ),
  })
  .strict()
  .meta({ id: 'FederationAnchor' })
export type FederationAnchor = z.infer<typeof zFederationAnchor>

export const zFederationTrustMark = z
  .object({
    trustMarkType: z.string().min(1).max(2000).describe('The trust mark type identifier (`trust_mark_type`)'),
    trustMark: zCompactJws.describe(
      'The trust mark JWT (typ trust-mark+jwt) its issuer gave; its `sub` is the tenant’s issuer or verifier entity identifier',
    ),
  })
  .strict()
  .meta({ id: 'FederationTrustMark' })

export const zFederationMembershipInput = z
  .object({
    keyChainId: zKeyChainId.describe(
      'Key chain whose key signs the entity configurations (federation entity key). It must not sign credentials or presentation requests; rotating it publishes the previous key until its grace period ends',
    ),
    authorityHints: z
      .array(zEntityId)
      .min(1)
      .max(10)
      .describe(
        'The immediate superiors (intermediates or trust anchors) of the tenant’s issuer and verifier',
      ),
    trustAnchors: z
      .array(zFederationAnchor)
      .max(10)
      .default([])
      .describe(
        'Trust anchors the tenant’s own trust chains end at: the `trust_chain` of `openid_federation` request objects is resolved to one of them',
      ),
    trustMarks: z
      .array(zFederationTrustMark)
      .max(20)
      .default([])
      .describe('Trust marks given to the tenant; each entity configuration carries those about it'),
    subordinateStatements: z
      .array(zCompactJws)
      .max(20)
      .default([])
      .describe(
        'Subordinate statements (typ entity-statement+jwt) superiors issued about the tenant’s issuer or verifier; used for its trust chains instead of fetching them while they have not expired',
      ),
    lifetimeSeconds: z
      .number()
      .int()
      .min(300)
      .max(30 * 86_400)
      .default(86_400)
      .describe('Lifetime (`exp` − `iat`) of the entity configurations'),
    organizationName: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('`organization_name` of the federation_entity metadata'),
  })
  .strict()
  .meta({ id: 'FederationMembershipDefinition' })
export type FederationMembershipInput = z.input<typeof zFederationMembershipInput>

export const zFederationMembership = z
  .object({
    keyChainId: zKeyChainId,
    authorityHints: z.array(z.string()),
    trustAnchors: z.array(zFederationAnchor),
    trustMarks: z.array(zFederationTrustMark),
    subordinateStatements: z.array(z.string()),
    lifetimeSeconds: z.number().int(),
    organizationName: z.string().nullable(),
    entityIds: z
      .object({
        issuer: z.string().describe('The issuer’s entity identifier (its credential issuer identifier)'),
        verifier: z.string().describe('The verifier’s entity identifier'),
      })
      .describe('Entity configurations are served at `<entity id>/.well-known/openid-federation`'),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('The tenant’s OpenID Federation membership')
  .meta({ id: 'FederationMembership' })
export type FederationMembership = z.infer<typeof zFederationMembership>
