import type { PresentationConfigInput } from '@credential-service/core-domain'

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
  /** PEM certificates, one after the other. */
  trustAnchors: string
  acceptAnyIssuer: boolean
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
  'trustAnchors',
  'acceptAnyIssuer',
] as const

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
  const anchors = splitPems(values.trustAnchors)
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
    trustAnchors: anchors.length ? anchors : undefined,
    acceptAnyIssuer: values.acceptAnyIssuer,
  }
  return Object.fromEntries(
    Object.entries(body).filter(([, value]) => value !== undefined),
  ) as PresentationConfigInput
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
    trustAnchors: (config?.trustAnchors ?? []).join('\n'),
    acceptAnyIssuer: config?.acceptAnyIssuer ?? false,
  }
}
