import { UpstreamError } from '@credential-service/core-domain'
import { type OutboundPolicy, outboundFetch } from '@credential-service/server-kit'
import { z } from 'zod'

/** How long one registrar call may take, from connecting to the last byte. */
const TIMEOUT_MS = 10_000

export interface RegistrarEndpoint {
  baseUrl: string
  tokenUrl: string
  clientId: string
  clientSecret: string
}

const zTokenAnswer = z.object({ access_token: z.string().min(1), token_type: z.string() }).loose()
const zRelyingPartyAnswer = z.object({ id: z.string().min(1) }).loose()
const zAccessCertificateAnswer = z.object({ id: z.string().min(1), crt: z.string().min(1) }).loose()
const zRegistrationCertificateAnswer = z.object({ id: z.string().min(1), jwt: z.string().min(1) }).loose()
// The reserved id becomes the document's `id` (at most 500 characters, as a given `config.id`).
// The token is optional: the reference registrar's published answer schema names only
// `reservedId` and `expiresAt`; when it comes, the submission carries it.
const zReservationAnswer = z
  .object({
    reservedId: z.string().min(1).max(500),
    expiresAt: z.string().optional(),
    reservationToken: z.string().min(1).optional(),
  })
  .loose()
const zSchemaMetadataEntryAnswer = z.object({ id: z.string().min(1).max(500) }).loose()

function parseJson<T>(body: Buffer, schema: z.ZodType<T>, name: string): T {
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch {
    throw new UpstreamError(`${name}: the registrar did not answer JSON`)
  }
  const parsed = schema.safeParse(json)
  if (!parsed.success) throw new UpstreamError(`${name}: the registrar's answer lacks required fields`)
  return parsed.data
}

/**
 * The registrar's wire protocol (docs/registrar.md): an OAuth 2.0 client credentials token
 * (RFC 6749 §4.4, client authentication by HTTP Basic, §2.3.1), then JSON calls with that bearer
 * token. Every call goes through `outboundFetch` (SSRF policy, no redirects, bounded answer);
 * failures are `UpstreamError`s naming the step and the HTTP status, never the answer's content.
 */
export function createRegistrarClient(endpoint: RegistrarEndpoint, outbound: OutboundPolicy) {
  const form = (value: string) => encodeURIComponent(value).replace(/%20/g, '+')
  let token: string | undefined

  async function accessToken(): Promise<string> {
    if (token) return token
    const name = 'registrar token endpoint'
    const basic = Buffer.from(`${form(endpoint.clientId)}:${form(endpoint.clientSecret)}`).toString('base64')
    const response = await outboundFetch(
      endpoint.tokenUrl,
      {
        name,
        purpose: 'registrar',
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${basic}`,
        },
        body: 'grant_type=client_credentials',
        timeoutMs: TIMEOUT_MS,
      },
      outbound,
    )
    if (response.status === 400 || response.status === 401)
      throw new UpstreamError(
        `${name} refused the client credentials (HTTP ${response.status}); check clientId and clientSecret`,
      )
    if (response.status !== 200) throw new UpstreamError(`${name} answered HTTP ${response.status}`)
    const answer = parseJson(response.body, zTokenAnswer, name)
    if (answer.token_type.toLowerCase() !== 'bearer')
      throw new UpstreamError(`${name} issued a '${answer.token_type}' token, not a Bearer token`)
    token = answer.access_token
    return token
  }

  async function post<T>(
    path: string,
    body: unknown,
    schema: z.ZodType<T>,
    name: string,
    options: {
      headers?: Record<string, string>
      /** What a 401 or 403 means at this path, when more than a refused access token. */
      refused?: string
    } = {},
  ): Promise<T> {
    const url = `${endpoint.baseUrl.replace(/\/+$/, '')}${path}`
    const response = await outboundFetch(
      url,
      {
        name,
        purpose: 'registrar',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${await accessToken()}`,
          ...options.headers,
        },
        body: JSON.stringify(body),
        timeoutMs: TIMEOUT_MS,
      },
      outbound,
    )
    if (response.status === 401 || response.status === 403)
      throw new UpstreamError(
        `${name}: the registrar refused ${options.refused ?? 'the access token'} (HTTP ${response.status})`,
      )
    if (response.status !== 200 && response.status !== 201)
      throw new UpstreamError(`${name}: the registrar answered HTTP ${response.status}`)
    return parseJson(response.body, schema, name)
  }

  return {
    /** `POST /relying-parties`: registers the tenant; answers the registrar's id for it. */
    registerRelyingParty: (body: { name: string; roles: string[]; identifiers: Record<string, string> }) =>
      post('/relying-parties', body, zRelyingPartyAnswer, 'relying party registration'),

    /** `POST /access-certificates`: a certificate for `publicKey` (SPKI PEM); `crt` is PEM, leaf first. */
    requestAccessCertificate: (body: { rpId: string; publicKey: string; dns: string[] }) =>
      post('/access-certificates', body, zAccessCertificateAnswer, 'access certificate request'),

    /** `POST /registration-certificates`: a signed JWT stating what the relying party may ask for. */
    requestRegistrationCertificate: (body: {
      rpId: string
      privacy_policy: string
      support_uri: string
      purpose: { lang: string; content: string }[]
      credentials: { format: string; meta: Record<string, unknown>; claims?: unknown[] }[]
    }) =>
      post(
        '/registration-certificates',
        body,
        zRegistrationCertificateAnswer,
        'registration certificate request',
      ),

    /**
     * `POST /schema-metadata/reserve`: an attestation id (a URL of the registrar's catalogue) to
     * sign into TS11 schema metadata, and the token that proves the reservation on submission.
     */
    reserveSchemaMetadataId: () =>
      post('/schema-metadata/reserve', {}, zReservationAnswer, 'schema metadata id reservation'),

    /**
     * `POST /schema-metadata`: submits a signed TS11 document (`attestation-schema+jwt`); a
     * reserved id needs its token in `X-Reservation-Token`. Answers the registrar's entry.
     */
    submitSchemaMetadata: (jwt: string, reservationToken?: string) =>
      post('/schema-metadata', { jwt }, zSchemaMetadataEntryAnswer, 'schema metadata submission', {
        ...(reservationToken === undefined ? {} : { headers: { 'x-reservation-token': reservationToken } }),
        // The registrar checks the signature against its access certificate too.
        refused: "the access token, the reservation token, or the document's signature or certificate",
      }),
  }
}
export type RegistrarClient = ReturnType<typeof createRegistrarClient>
