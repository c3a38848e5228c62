import {
  type DcApiProtocol,
  dcApiProtocols,
  type PresentationConfigInput,
  zDcqlQuery,
} from '@credential-service/core-domain'

/** The presentation configuration editor's values: the body of POST /api/presentations as form inputs. */
export type PresentationConfigValues = {
  id: string
  description: string
  /** The DCQL query as JSON text: written by the builder, or typed in the JSON mode. */
  dcqlQuery: string
  lifetimeSeconds: number | string
  responseMode: 'direct_post' | 'direct_post.jwt'
  transactionDataTypes: string[]
  webhookEndpointId: string
  redirectUri: string
  keyChainId: string
  clientIdPrefix: NonNullable<PresentationConfigInput['clientIdPrefix']>
  /** The Verifier Attestation JWT, for clientIdPrefix verifier_attestation only. */
  verifierAttestation: string
  acceptAnyIssuer: boolean
  /** The tenant's trust lists (`/api/trust-lists`) issuers may also chain to; none = no `trustListIds`. */
  trustListIds: string[]
  /** `trustedAuthorities: 'from-anchors'`: requests name the anchors in `trusted_authorities`. */
  trustedAuthorities: boolean
  /** The Digital Credentials API settings; empty lists are sent as no `dcApi` member. */
  dcApi: {
    /** Web origins, in order; none = any origin may ask. */
    origins: string[]
    /** The protocols offered, in order of preference (the selection order); none = the default order. */
    protocols: DcApiProtocol[]
    /** Annex C reader authentication: the DeviceRequest signed by the key chain. */
    readerAuth: boolean
  }
}

/** The form inputs an API issue path can name; DCQL problems land on the DCQL editor. */
export const PRESENTATION_INPUTS = [
  'id',
  'description',
  'dcqlQuery',
  'lifetimeSeconds',
  'responseMode',
  'transactionDataTypes',
  'webhookEndpointId',
  'redirectUri',
  'keyChainId',
  'clientIdPrefix',
  'verifierAttestation',
  'acceptAnyIssuer',
  'trustListIds',
  'trustedAuthorities',
  'dcApi.origins',
  'dcApi.protocols',
  'dcApi.readerAuth',
] as const

/**
 * The field names of the values: the inputs and one per origin (`dcApi.origins.1`), so that a
 * problem of one origin is told apart from one of the list (see `dcApiOriginsError`).
 */
export function presentationFields(values: PresentationConfigValues): string[] {
  return [...PRESENTATION_INPUTS, ...values.dcApi.origins.map((_, index) => `dcApi.origins.${index}`)]
}

/** The error to show on the origins input: the list's own, else the first origin's, named. */
export function dcApiOriginsError(
  errors: Record<string, unknown>,
  origins: readonly string[],
): string | undefined {
  const own = errors['dcApi.origins']
  if (typeof own === 'string') return own
  for (const [index, origin] of origins.entries()) {
    const error = errors[`dcApi.origins.${index}`]
    if (typeof error === 'string') return `${origin}: ${error}`
  }
  return undefined
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g

/** The PEM certificates of a text; a text that holds none is sent as it is, for the API to name. */
export function splitPems(text: string): string[] {
  if (text.trim() === '') return []
  const pems = text.match(PEM)
  return pems ? [...pems] : [text.trim()]
}

const optional = (value: string): string | undefined => (value.trim() === '' ? undefined : value.trim())

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    // The DCQL editor names the syntax error as it is typed; the body then lacks the query.
    return undefined
  }
}

export function presentationBody(values: PresentationConfigValues): PresentationConfigInput {
  const body = {
    id: values.id.trim(),
    description: optional(values.description),
    dcqlQuery: parseJson(values.dcqlQuery),
    lifetimeSeconds: Number(values.lifetimeSeconds),
    responseMode: values.responseMode,
    transactionDataTypes: values.transactionDataTypes.length ? values.transactionDataTypes : undefined,
    webhookEndpointId: optional(values.webhookEndpointId),
    redirectUri: optional(values.redirectUri),
    keyChainId: values.keyChainId.trim(),
    clientIdPrefix: values.clientIdPrefix,
    verifierAttestation:
      values.clientIdPrefix === 'verifier_attestation' ? optional(values.verifierAttestation) : undefined,
    trustListIds: values.trustListIds.length ? [...values.trustListIds] : undefined,
    trustedAuthorities: values.trustedAuthorities ? ('from-anchors' as const) : undefined,
    dcApi: dcApiBody(values.dcApi),
    acceptAnyIssuer: values.acceptAnyIssuer,
  }
  return Object.fromEntries(
    Object.entries(body).filter(([, value]) => value !== undefined),
  ) as PresentationConfigInput
}

/** The protocols a configuration without `dcApi.protocols` offers; undefined while the query is no DCQL. */
export function defaultDcApiProtocols(values: PresentationConfigValues): DcApiProtocol[] | undefined {
  const query = zDcqlQuery.safeParse(parseJson(values.dcqlQuery))
  if (!query.success) return undefined
  return dcApiProtocols({ clientIdPrefix: values.clientIdPrefix, dcqlQuery: query.data })
}

/** `dcApi` as sent: origins trimmed, empty lists and `readerAuth: false` (the default) left out, nothing at all when all are. */
function dcApiBody(dcApi: PresentationConfigValues['dcApi']): PresentationConfigInput['dcApi'] {
  const origins = dcApi.origins.map((origin) => origin.trim())
  if (origins.length === 0 && dcApi.protocols.length === 0 && !dcApi.readerAuth) return undefined
  return {
    ...(dcApi.protocols.length ? { protocols: [...dcApi.protocols] } : {}),
    ...(origins.length ? { origins } : {}),
    ...(dcApi.readerAuth ? { readerAuth: true } : {}),
  }
}

export function presentationValues(config?: PresentationConfigInput): PresentationConfigValues {
  return {
    id: config?.id ?? '',
    description: config?.description ?? '',
    dcqlQuery: config ? JSON.stringify(config.dcqlQuery, null, 2) : '',
    lifetimeSeconds: config?.lifetimeSeconds ?? 300,
    responseMode: config?.responseMode ?? 'direct_post.jwt',
    transactionDataTypes: config?.transactionDataTypes ?? [],
    webhookEndpointId: config?.webhookEndpointId ?? '',
    redirectUri: config?.redirectUri ?? '',
    keyChainId: config?.keyChainId ?? '',
    clientIdPrefix: config?.clientIdPrefix ?? 'x509_san_dns',
    verifierAttestation: config?.verifierAttestation ?? '',
    acceptAnyIssuer: config?.acceptAnyIssuer ?? false,
    trustListIds: [...(config?.trustListIds ?? [])],
    trustedAuthorities: config?.trustedAuthorities === 'from-anchors',
    dcApi: {
      origins: [...(config?.dcApi?.origins ?? [])],
      protocols: [...(config?.dcApi?.protocols ?? [])],
      readerAuth: config?.dcApi?.readerAuth ?? false,
    },
  }
}
