import type { ClaimField, OfferCreate } from '@credential-service/core-domain'
import { ManagementApiError } from '@credential-service/sdk'
import { describeError, type FieldErrors, fieldOf } from '../forms/problems'
import { type ClaimInput, checkClaims, claimsFromInputs, inputOfPath } from './claims-form'

/** The offer form's values, named as the body's members (so problems land on them by path). */
export interface OfferValues extends Record<string, unknown> {
  credentialConfigurationIds: string[]
  grant: 'pre-authorized_code' | 'authorization_code' | 'both'
  txCode: {
    required: boolean
    inputMode: 'numeric' | 'text'
    length: number
    description: string
    value: string
  }
  lifetimeSeconds: number
  byReference: boolean
  statusHandle: string
}

export const OFFER_FIELDS = [
  'credentialConfigurationIds',
  'grant',
  'txCode',
  'txCode.inputMode',
  'txCode.length',
  'txCode.description',
  'txCode.value',
  'lifetimeSeconds',
  'byReference',
  'statusHandle',
] as const

export const initialOfferValues = (): OfferValues => ({
  credentialConfigurationIds: [],
  grant: 'pre-authorized_code',
  txCode: { required: false, inputMode: 'numeric', length: 6, description: '', value: '' },
  lifetimeSeconds: 600,
  byReference: true,
  statusHandle: '',
})

/** Where the claims of one configuration of the offer come from. */
export type ClaimsSource =
  /** The claims form (its texts, one per input). */
  | { kind: 'form'; texts: string[] }
  /** The configuration's attribute provider, or the holder's login (`userAuthentication`): none in the offer. */
  | { kind: 'none' }

/** What the form knows of a configuration: its inputs, and its fields when the roles may read them. */
export interface OfferedConfig {
  inputs: ClaimInput[]
  fields?: ClaimField[]
}

export interface OfferBody {
  body: OfferCreate
  /** Claims errors by configuration id, then input index (-1: of no input). */
  claimErrors: Record<string, Record<number, string>>
}

/** The request body of the form, and what the claims form says is wrong before anything is sent. */
export function offerBody(
  values: OfferValues,
  sources: Record<string, ClaimsSource>,
  configs: Record<string, OfferedConfig>,
): OfferBody {
  const claims: Record<string, Record<string, unknown>> = {}
  const claimErrors: Record<string, Record<number, string>> = {}
  for (const id of values.credentialConfigurationIds) {
    const source = sources[id]
    const config = configs[id]
    if (source?.kind !== 'form' || !config) continue
    const parsed = claimsFromInputs(config.inputs, source.texts)
    const errors = Object.keys(parsed.errors).length
      ? parsed.errors
      : config.fields
        ? checkClaims(config.fields, config.inputs, parsed.claims)
        : {}
    if (Object.keys(errors).length) claimErrors[id] = errors
    claims[id] = parsed.claims
  }
  const { txCode } = values
  const body: OfferCreate = {
    credentialConfigurationIds: values.credentialConfigurationIds,
    grant: values.grant,
    lifetimeSeconds: values.lifetimeSeconds,
    byReference: values.byReference,
    // The authorization code flow would skip a tx_code: the form offers none with that grant alone.
    ...(txCode.required && values.grant !== 'authorization_code'
      ? {
          txCode: {
            inputMode: txCode.inputMode,
            length: txCode.length,
            ...(txCode.description.trim() ? { description: txCode.description.trim() } : {}),
            ...(txCode.value.trim() ? { value: txCode.value.trim() } : {}),
          },
        }
      : {}),
    ...(Object.keys(claims).length ? { claims } : {}),
    ...(values.statusHandle.trim() ? { statusHandle: values.statusHandle.trim() } : {}),
  }
  return { body, claimErrors }
}

/**
 * An API refusal of an offer on the form: `body.claims.<configId>.<path>` on the claims input of
 * that path, the other `errors[]` on the fields they name, the rest in the form's message.
 */
export function offerProblemErrors(
  error: unknown,
  configs: Record<string, OfferedConfig>,
): { form: FieldErrors; claims: Record<string, Record<number, string>> } {
  const form: FieldErrors = {}
  const claims: Record<string, Record<number, string>> = {}
  const unmatched: string[] = []
  // Longest ids first: an id may contain dots, and one id may be the prefix of another.
  const ids = Object.keys(configs).sort((a, b) => b.length - a.length)
  const problems = error instanceof ManagementApiError ? (error.problem?.errors ?? []) : []
  for (const { path, message } of problems) {
    const bare = path.replace(/^body\.?/, '')
    const id = ids.find(
      (candidate) => bare === `claims.${candidate}` || bare.startsWith(`claims.${candidate}.`),
    )
    if (id !== undefined) {
      const rest = bare.slice(`claims.${id}.`.length)
      const index = rest ? inputOfPath(configs[id]?.inputs ?? [], rest.split('.')) : undefined
      const ofConfig = claims[id] ?? {}
      ofConfig[index ?? -1] ??= message
      claims[id] = ofConfig
      continue
    }
    const field = fieldOf(bare, OFFER_FIELDS)
    if (field) form[field] ??= message
    else unmatched.push(path ? `${path}: ${message}` : message)
  }
  if (problems.length === 0 || unmatched.length > 0) form[''] = [describeError(error), ...unmatched].join(' ')
  return { form, claims }
}

/**
 * The configurations whose claims come from the form and the form gives none: the credential
 * would hold no claim, which the page asks to be confirmed (issue 42 item 3).
 */
export function configsWithoutClaims(body: OfferCreate, sources: Record<string, ClaimsSource>): string[] {
  return body.credentialConfigurationIds.filter(
    (id) => sources[id]?.kind === 'form' && Object.keys(body.claims?.[id] ?? {}).length === 0,
  )
}
