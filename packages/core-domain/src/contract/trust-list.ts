import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

const zPem = z.string().min(1).max(20_000)

const zPemSource = z
  .object({
    type: z.literal('pem'),
    certificates: z
      .array(zPem)
      .min(1)
      .max(100)
      .describe('PEM X.509 certificates to trust (a certificate that does not parse is a 422 naming it)'),
  })
  .strict()
  .describe('Certificates given here, in PEM')

/** What a fetched list's source names: where it is, who signs it, which services count, how often. */
const fetched = (what: string) => ({
  url: z
    .string()
    .url()
    .max(2000)
    .describe(
      `Where the ${what} is fetched; follows the outbound policy (https, no internal address unless OUTBOUND_ALLOW_HTTP / OUTBOUND_ALLOWED_HOSTS)`,
    ),
  signerCertificates: z
    .array(zPem)
    .min(1)
    .max(20)
    .describe(
      'PEM certificates allowed to sign the list (the scheme operator’s); a list whose signature none of them verifies is refused',
    ),
  serviceTypes: z
    .array(z.string().url().max(500))
    .max(50)
    .optional()
    .describe(
      'Keep only services whose ServiceTypeIdentifier is one of these URIs (e.g. http://uri.etsi.org/TrstSvc/Svctype/CA/QC, http://uri.etsi.org/19602/SvcType/PID/Issuance); absent: every service',
    ),
  refreshSeconds: z
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(3600)
    .describe('How often the list is fetched again (one fetch per interval across all processes)'),
})

const zEtsiTlSource = z
  .object({ type: z.literal('etsi-tl'), ...fetched('ETSI TS 119 612 trusted list (XML)') })
  .strict()
  .describe(
    'An ETSI TS 119 612 trusted list (XML with an enveloped XML signature carrying XAdES signed properties that name the signer certificate), fetched and checked by the service',
  )

const zEtsiLotlSource = z
  .object({
    type: z.literal('etsi-lotl'),
    ...fetched('ETSI TS 119 612 list of trusted lists (LOTL, XML)'),
    territories: z
      .array(
        z
          .string()
          .regex(/^[A-Z]{2}$/)
          .describe('A SchemeTerritory code, e.g. DE'),
      )
      .min(1)
      .max(50)
      .optional()
      .describe(
        'Follow only the pointers to the lists of these SchemeTerritory codes (e.g. DE, AT); absent: every territory the list points to',
      ),
  })
  .strict()
  .describe(
    'An ETSI TS 119 612 list of trusted lists (LOTL, e.g. the EU one): its signature must verify with one of signerCertificates; every pointer (§5.3.13 PointersToOtherTSL) to an XML trusted list is followed, each pointed list fetched under the outbound policy and checked with the certificates its pointer names, and the certificates of their services (serviceTypes) are used. One pointed list that cannot be fetched or checked fails the whole refresh (the last good content is kept); nextUpdate is the earliest of all the lists read',
  )

const zLoteSource = z
  .object({
    type: z.literal('lote'),
    ...fetched('ETSI TS 119 602 list of trusted entities (JSON, signed as a compact JWS)'),
  })
  .strict()
  .describe(
    'An ETSI TS 119 602 List of Trusted Entities in its JSON form, signed as a compact JWS (JAdES), fetched and checked by the service',
  )

const zFederationJwk = z
  .object({ kty: z.string().max(20), kid: z.string().min(1).max(200) })
  .loose()
  .describe('A public JWK of the trust anchor (its kid is required: federation statements name it)')

const zOpenIdFederationSource = z
  .object({
    type: z.literal('openid-federation'),
    trustAnchor: z
      .string()
      .url()
      .max(2000)
      .describe(
        'The entity identifier of the trust anchor (OpenID Federation 1.0 §1.2); the superiors on the way to it are fetched under the outbound policy',
      ),
    jwks: z
      .object({ keys: z.array(zFederationJwk).min(1).max(20) })
      .strict()
      .describe(
        'The federation entity keys of the trust anchor, held out of band (§4): its configuration and the statements it issues must verify with one of them',
      ),
    requiredTrustMarkTypes: z
      .array(z.string().min(1).max(2000))
      .max(20)
      .optional()
      .describe(
        'Trust mark types (§7) the trusted entity must hold, each issued by an issuer the anchor names in trust_mark_issuers; absent: none required',
      ),
  })
  .strict()
  .describe(
    'An OpenID Federation 1.0 trust anchor: an entity (a credential issuer, a wallet provider) is trusted when its trust chain resolves to this anchor, with the metadata policies applied and the required trust marks valid. Contributes no certificates',
  )

export const zTrustListSource = z
  .discriminatedUnion('type', [
    zPemSource,
    zEtsiTlSource,
    zEtsiLotlSource,
    zLoteSource,
    zOpenIdFederationSource,
  ])
  .describe('Where the trusted certificates come from')
export type TrustListSource = z.output<typeof zTrustListSource>
export type OpenIdFederationSource = z.output<typeof zOpenIdFederationSource>

/** Sources the refresh job fetches (the others hold what was given at save). */
export const isFetchedTrustListSource = (source: TrustListSource) =>
  source.type !== 'pem' && source.type !== 'openid-federation'

/** A set of certificates the tenant trusts for credential issuers, named by presentation configurations. */
export const zTrustListInput = z
  .object({
    id: zConfigId.describe('Trust list id'),
    description: z.string().max(2000).optional(),
    source: zTrustListSource,
    graceSeconds: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .default(86_400)
      .describe(
        'How long past the list’s NextUpdate its last good content is still used; after that the list contributes no certificates (fail closed) until a refresh succeeds',
      ),
  })
  .strict()
  .describe('A trust list, as sent to create or replace one')
  .meta({ id: 'TrustListDefinition' })
export type TrustListInput = z.input<typeof zTrustListInput>
export type TrustListData = z.output<typeof zTrustListInput>

export const TRUST_LIST_STATES = ['current', 'pending', 'expired'] as const

export const zTrustListStatus = z
  .object({
    state: z
      .enum(TRUST_LIST_STATES)
      .describe(
        'current: its certificates are used; pending: not fetched successfully yet; expired: past nextUpdate + graceSeconds, contributes nothing',
      ),
    certificateCount: z.number().int().describe('How many certificates the list contributes when current'),
    listIssuedAt: zTimestamp.nullable().describe('ListIssueDateTime of the last good list'),
    nextUpdate: zTimestamp.nullable().describe('NextUpdate of the last good list'),
    fetchedAt: zTimestamp.nullable().describe('When the last good list was fetched'),
    nextRefreshAt: zTimestamp.nullable().describe('When the list is fetched next'),
    lastError: z.string().nullable().describe('Why the last fetch failed; null after a good one'),
    lastErrorAt: zTimestamp.nullable(),
  })
  .describe('What the service holds of the list')

export const zTrustList = zTrustListInput
  .extend({
    description: z.string().nullable(),
    status: zTrustListStatus,
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('A trust list and what the service holds of it')
  .meta({ id: 'TrustList' })
export type TrustList = z.infer<typeof zTrustList>
