import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'
import { zDcqlQuery } from './dcql'
import { zKeyChainId } from './key-chain'

/** The client identifier prefixes a presentation configuration may use (OpenID4VP 1.0 §5.9.3). */
export const zClientIdPrefix = z.enum([
  'x509_san_dns',
  'x509_hash',
  'redirect_uri',
  'verifier_attestation',
  'decentralized_identifier',
  'openid_federation',
])
export type ClientIdPrefix = z.infer<typeof zClientIdPrefix>

/**
 * Protocols of the W3C Digital Credentials API a request can be offered in: OpenID4VP 1.0
 * Appendix A (signed and unsigned requests) and ISO/IEC 18013-7 Annex C (`org-iso-mdoc`).
 */
export const zDcApiProtocol = z.enum(['openid4vp-v1-signed', 'openid4vp-v1-unsigned', 'org-iso-mdoc'])
export type DcApiProtocol = z.infer<typeof zDcApiProtocol>
export const DEFAULT_DC_API_PROTOCOLS: readonly DcApiProtocol[] = zDcApiProtocol.options

/** A web origin as browsers serialise it: `scheme://host[:port]`, nothing after it. */
export const zWebOrigin = z
  .string()
  .max(300)
  .refine(
    (value) => {
      try {
        const url = new URL(value)
        return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value
      } catch {
        return false
      }
    },
    { error: 'must be a web origin: scheme://host[:port], no path, no trailing slash' },
  )

export const zDcApiSettings = z
  .object({
    protocols: z
      .array(zDcApiProtocol)
      .min(1)
      .max(3)
      .refine((list) => new Set(list).size === list.length, { error: 'names a protocol twice' })
      .optional()
      .describe(
        'The protocols a `dc-api` request offers the browser, in this order of preference. Default: `openid4vp-v1-signed` (not with `redirect_uri`), `openid4vp-v1-unsigned`, and `org-iso-mdoc` when the query asks for one mso_mdoc credential',
      ),
    origins: z
      .array(zWebOrigin)
      .min(1)
      .max(20)
      .optional()
      .describe(
        'The web origins whose pages may ask for this configuration over the Digital Credentials API (https; http only where OUTBOUND_ALLOW_HTTP is set). Without it, a request may name any origin',
      ),
    readerAuth: z
      .boolean()
      .optional()
      .describe(
        'ISO/IEC 18013-7 Annex C reader authentication (ISO/IEC 18013-5 §9.1.4): the `org-iso-mdoc` DeviceRequest carries `readerAuth`, a COSE_Sign1 by `keyChainId` over ReaderAuthentication (the request’s SessionTranscript and ItemsRequest) with the key chain’s certificates in `x5chain`. Needs `org-iso-mdoc` among the protocols. Default false',
      ),
  })
  .strict()
  .describe(
    'Presentations over the W3C Digital Credentials API (OpenID4VP 1.0 Appendix A, ISO/IEC 18013-7 Annex C)',
  )
  .meta({ id: 'DcApiSettings' })
export type DcApiSettings = z.infer<typeof zDcApiSettings>

export const zPresentationConfigInput = z
  .object({
    id: zConfigId,
    description: z.string().max(2000).optional(),
    dcqlQuery: zDcqlQuery.describe('What to ask the wallet for (OpenID4VP 1.0 §6)'),
    lifetimeSeconds: z
      .number()
      .int()
      .min(30)
      .max(86_400)
      .default(300)
      .describe('How long a request stays answerable'),
    responseMode: z
      .enum(['direct_post', 'direct_post.jwt'])
      .default('direct_post.jwt')
      .describe('HAIP asks for direct_post.jwt'),
    transactionDataTypes: z
      .array(z.string().min(1).max(200))
      .max(20)
      .optional()
      .describe('Transaction data types requests may carry'),
    webhookEndpointId: zConfigId.optional().describe('Where results are delivered'),
    redirectUri: z
      .url()
      .optional()
      .describe(
        'Same-device flows: where the wallet sends the user back. https (http only where OUTBOUND_ALLOW_HTTP is set), no fragment',
      ),
    keyChainId: zKeyChainId.describe('Key chain that signs request objects'),
    clientIdPrefix: zClientIdPrefix
      .default('x509_san_dns')
      .describe(
        "Client identifier prefix (OpenID4VP 1.0 §5.9.3). `x509_san_dns`: the SAN dNSName of the signing certificate; `x509_hash`: the SHA-256 hash of it; `redirect_uri`: unsigned requests passed by value, the client identifier is `redirect_uri:<response_uri>` (same-device flows; the wallet cannot authenticate the verifier); `verifier_attestation`: requests signed with the key chain key that `verifierAttestation` certifies, the client identifier is `verifier_attestation:<sub of the attestation>`; `decentralized_identifier`: the tenant verifier's did:web (`did:web:<host>:verifiers:<tenant>`, its DID document served at `{PUBLIC_URL}/verifiers/{tenant}/did.json` with the tenant's key chain keys), requests signed with `kid` = a verification method of it",
      ),
    verifierAttestation: z
      .string()
      .min(1)
      .max(20_000)
      .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a compact JWT')
      .optional()
      .describe(
        'Only with clientIdPrefix `verifier_attestation` (OpenID4VP 1.0 §12): a Verifier Attestation JWT issued to this tenant by a party wallets trust. Checked at save: `typ` `verifier-attestation+jwt`, `iss`, `sub` = `{PUBLIC_URL}/verifiers/{tenant}`, `exp` in the future, `cnf.jwk` = the public key of `keyChainId`. Sent in the JOSE header `jwt` of every request object',
      ),
    dcApi: zDcApiSettings.optional(),
    trustAnchors: z
      .array(z.string().min(1).max(20_000))
      .max(50)
      .optional()
      .describe(
        'Deprecated (dropped in the next interface version): PEM certificates converted at save into a `pem` trust list `anchors-<12 hex of SHA-256 of the trimmed, sorted PEMs>` named in `trustListIds` (one list per set in the tenant; a certificate that does not parse is a 422). Never returned: name trust lists in `trustListIds` instead',
      ),
    trustedAuthorities: z
      .enum(['from-anchors'])
      .optional()
      .describe(
        "`from-anchors`: every credential query without `trusted_authorities` of its own is sent with `trusted_authorities: [{ type: 'aki', values }]` (OpenID4VP 1.0 §6.1.1.1), the values naming this configuration's issuer trust anchors (the current certificates of its `trustListIds` lists and the tenant's key chains: a CA by its subjectKeyIdentifier, a leaf by the authority key identifier it carries), and, when it names current lists of source type `etsi-tl`, `{ type: 'etsi_tl', values }` with their URLs (§6.1.1.2), and in `dc+sd-jwt` and `jwt_vc_json` queries, when it names lists of source type `openid-federation`, `{ type: 'openid_federation', values }` with their trust anchors' entity identifiers, so wallets offer only credentials from issuers this verifier trusts. The anchors still decide when the answer comes. Not with `acceptAnyIssuer`",
      ),
    trustListIds: z
      .array(zConfigId)
      .max(20)
      .optional()
      .describe(
        'Trust lists (`/api/trust-lists`) whose current certificates credential issuers may chain to, besides the tenant’s own key chains; an unknown id is a 422 naming it, and a named list cannot be deleted',
      ),
    acceptAnyIssuer: z
      .boolean()
      .default(false)
      .describe(
        'Development only: accept credentials whose issuer chains to no trust anchor, and SD-JWT VCs whose iss is not a SAN of the x5c leaf (the signature is still checked)',
      ),
  })
  .strict()
  .describe('Presentation configuration, as sent to create or replace one')
  .meta({ id: 'PresentationConfigDefinition' })
export type PresentationConfigInput = z.input<typeof zPresentationConfigInput>
export type PresentationConfigData = z.output<typeof zPresentationConfigInput>

export const zPresentationConfig = zPresentationConfigInput
  .omit({ trustAnchors: true })
  .extend({
    lifetimeSeconds: z.number().int(),
    responseMode: z.enum(['direct_post', 'direct_post.jwt']),
    clientIdPrefix: zClientIdPrefix,
    acceptAnyIssuer: z.boolean(),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('A stored presentation configuration')
  .meta({ id: 'PresentationConfig' })
export type PresentationConfig = z.infer<typeof zPresentationConfig>

export const zPresentationRequestCreate = z
  .object({
    presentationConfigId: zConfigId,
    responseMode: z
      .enum(['direct_post', 'direct_post.jwt'])
      .optional()
      .describe('Overrides the configuration'),
    transactionData: z
      .array(
        z.object({ type: z.string().min(1), credential_ids: z.array(z.string()).min(1).max(50) }).loose(),
      )
      .max(10)
      .optional()
      .describe('Transaction data objects (OpenID4VP §5.1); each type must be allowed by the configuration'),
    redirectUri: z
      .url()
      .optional()
      .describe(
        'Same-device flows: where the wallet sends the user after responding. https (http only where OUTBOUND_ALLOW_HTTP is set), no fragment',
      ),
    webhookEndpointId: zConfigId
      .optional()
      .describe('Overrides the configuration; a webhook endpoint of the same tenant'),
    lifetimeSeconds: z.number().int().min(30).max(86_400).optional().describe('Overrides the configuration'),
    transport: z
      .enum(['uri', 'dc-api'])
      .default('uri')
      .describe(
        '`uri`: an `openid4vp://` URI for a QR code or link. `dc-api`: also the `requests` a page of `origin` hands to `navigator.credentials.get` (W3C Digital Credentials API); the URI stays as the fallback for browsers without it',
      ),
    origin: zWebOrigin
      .optional()
      .describe(
        'With `dc-api` (and only then): the origin of the page that calls the Digital Credentials API. The presentation must be bound to it (OpenID4VP 1.0 Appendix A.4, ISO/IEC 18013-7 Annex C); it must be one of the configuration’s `dcApi.origins` when it lists any',
      ),
  })
  .strict()
  .superRefine((value, context) => {
    if (value.transport === 'dc-api' && value.origin === undefined)
      context.addIssue({ code: 'custom', path: ['origin'], message: 'is required with transport dc-api' })
    if (value.transport !== 'dc-api' && value.origin !== undefined)
      context.addIssue({ code: 'custom', path: ['origin'], message: 'is only for transport dc-api' })
  })
  .meta({ id: 'PresentationRequestCreate' })
export type PresentationRequestCreate = z.output<typeof zPresentationRequestCreate>

export const zPresentationRequestCreated = z
  .object({
    sessionId: z.string(),
    clientId: z.string().describe('Client identifier with its prefix'),
    requestUri: z
      .string()
      .nullable()
      .describe(
        'Where the wallet fetches the signed request object; null for `redirect_uri` requests, passed by value',
      ),
    requestUriMethod: z.literal('post').nullable().describe('null for `redirect_uri` requests'),
    authorizationRequestUri: z
      .string()
      .describe(
        '`openid4vp://` URI for a QR code (cross-device) or a link (same-device). With the `redirect_uri` prefix it carries the whole unsigned request (OpenID4VP 1.0 §5.9.3)',
      ),
    dcApi: z
      .object({
        requests: z
          .array(z.object({ protocol: zDcApiProtocol, data: z.record(z.string(), z.unknown()) }))
          .describe(
            'Hand to `navigator.credentials.get({ mediation: "required", digital: { requests } })`, as they are, in this order',
          ),
        responseUri: z
          .string()
          .describe(
            'Where the page posts the browser’s answer as JSON `{ protocol, data }` (the DigitalCredential’s fields); public, bound to this request, one answer per request',
          ),
      })
      .optional()
      .describe('Only with transport `dc-api`'),
    expiresAt: zTimestamp,
  })
  .meta({ id: 'PresentationRequestCreated' })
export type PresentationRequestCreated = z.infer<typeof zPresentationRequestCreated>

export const zPresentationSession = z
  .object({
    id: z.string(),
    kind: z.literal('presentation'),
    status: z.enum(['pending', 'verified', 'failed', 'expired']),
    presentationConfigId: z.string(),
    failureReason: z.string().nullable(),
    claims: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'Disclosed claims per DCQL credential id, in single-session reads. Null before a verified response, in lists, once dropped by retention, and always when `responseCodeRequired`: such claims are released once, by `POST /api/sessions/{id}/result` with the response code',
      ),
    responseCodeRequired: z
      .boolean()
      .describe(
        'Same-device flow (OpenID4VP §8.2, HAIP): the wallet was redirected with a `response_code`, and only that code releases the claims (session fixation, OpenID4VP §14.3)',
      ),
    delivery: z
      .object({
        status: z.enum(['none', 'pending', 'delivered', 'failed']),
        attempts: z.number().int(),
        error: z.string().nullable(),
      })
      .describe('Delivery of the result to the webhook endpoint'),
    createdByClientId: z.string(),
    expiresAt: zTimestamp,
    requestFetchedAt: zTimestamp.nullable(),
    responseReceivedAt: zTimestamp.nullable(),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .meta({ id: 'PresentationSession' })
export type PresentationSession = z.infer<typeof zPresentationSession>
