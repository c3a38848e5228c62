import {
  type CredentialConfig,
  formatSpec,
  NotFoundError,
  RuleViolationError,
  type SignedTs11SchemaMeta,
  type Ts11SchemaMetaConfig,
  type ValidationIssue,
} from '@credential-service/core-domain'
import { type Signer, subresourceIntegrity } from '@credential-service/crypto'
import {
  createCredentialConfigRepository,
  createKeyChainRepository,
  type Database,
} from '@credential-service/db-schema'
import type { KeyRuntime } from '@credential-service/server-kit'
import { signDocumentBytes } from './schema-metadata-jws'

/** `typ` of a signed TS11 schema metadata document, as the peer's library writes it. */
export const SIGNED_TS11_TYP = 'attestation-schema+jwt'

export interface Ts11Deps {
  db: Database
  keys: Pick<KeyRuntime, 'signer'>
  now: () => Date
}

export interface Ts11SignBody {
  config: Ts11SchemaMetaConfig
  credentialConfigId?: string | undefined
  keyChainId?: string | undefined
}

/** `format` and the format's metadata of a credential configuration (TS11 schema URI entry). */
const formatOf = (config: CredentialConfig) => ({
  format: config.config.format,
  metadata: formatSpec(config.config.format).typeMetadata(config.config),
})

/** A checked TS11 document and its signer, before the attestation id is settled. */
export interface PreparedTs11 {
  document: Omit<Ts11SchemaMetaConfig, 'schemaURIs' | 'trustedAuthorities'> & {
    schemaURIs: unknown[]
    trustedAuthorities: unknown[]
  }
  keyChainId: string
  signer: Signer
}

/**
 * Checks TS11 schema metadata as the peer product (EUDIPLO) sends it in `config` (experimental,
 * like the draft) and resolves its signer: `schemaURIs` entries get `format` and `metadata` from
 * a credential configuration (the entry's or the body's), `trustedAuthorities` must name a
 * framework and value. Nothing outside the tenant's database is asked, so a submission never
 * reserves an id for a document that cannot be signed.
 */
export async function prepareTs11SchemaMeta(
  deps: Ts11Deps,
  tenantId: string,
  body: Ts11SignBody,
): Promise<PreparedTs11> {
  const configs = createCredentialConfigRepository(deps.db, tenantId)
  const configOf = async (id: string) => {
    const found = await configs.get(id)
    if (!found) throw new NotFoundError('credential configuration', id)
    return found
  }
  const linked = body.credentialConfigId ? await configOf(body.credentialConfigId) : undefined

  const issues: ValidationIssue[] = []
  const schemaURIs = []
  for (const [index, entry] of (body.config.schemaURIs ?? []).entries()) {
    const path = `body.config.schemaURIs.${index}`
    const source = entry.credentialConfigId ? await configOf(entry.credentialConfigId) : linked
    const derived = source ? formatOf(source) : undefined
    const format = entry.format ?? derived?.format
    const metadata = entry.metadata ?? derived?.metadata
    if (entry.uri === undefined)
      issues.push({ path: `${path}.uri`, message: 'required: this service hosts no schema documents' })
    if (format === undefined || metadata === undefined)
      issues.push({
        path: `${path}.format`,
        message: 'give format and metadata, or a credentialConfigId (here or in the body) to take them from',
      })
    schemaURIs.push({ format, uri: entry.uri, metadata })
  }
  const trustedAuthorities = (body.config.trustedAuthorities ?? []).map((authority, index) => {
    const path = `body.config.trustedAuthorities.${index}`
    if (authority.trustListId !== undefined)
      issues.push({
        path: `${path}.trustListId`,
        message: 'trust lists are not kept here: give frameworkType and value',
      })
    else if (authority.frameworkType === undefined || authority.value === undefined)
      issues.push({ path, message: 'frameworkType and value are required' })
    const { trustListId: _, ...rest } = authority
    return rest
  })
  if (issues.length)
    throw new RuleViolationError('the TS11 schema metadata is incomplete; see errors', issues)

  const keyChainId =
    body.keyChainId ??
    linked?.keyChainId ??
    (await createKeyChainRepository(deps.db, tenantId).getDefault())?.id
  if (keyChainId === undefined) {
    const message = 'required: no credentialConfigId names one and the tenant has no default key chain'
    throw new RuleViolationError(message, [{ path: 'body.keyChainId', message }])
  }
  const signer = await deps.keys.signer(tenantId, keyChainId)
  return { document: { ...body.config, schemaURIs, trustedAuthorities }, keyChainId, signer }
}

/**
 * Signs a prepared TS11 document: `id` (the given one, else `config.id`, when any), `version`,
 * `rulebookURI`, `attestationLoS`, `bindingType`, `schemaURIs`, `trustedAuthorities`, then `iat`,
 * as the JWS payload. Unlike the peer this fetches no URL (no integrity of the rulebook or
 * schemas is computed); nothing is stored.
 */
export async function signPreparedTs11(
  deps: Pick<Ts11Deps, 'now'>,
  prepared: PreparedTs11,
  id = prepared.document.id,
): Promise<SignedTs11SchemaMeta> {
  const { keyChainId, signer } = prepared
  const signedAt = deps.now()
  const { version, rulebookURI, attestationLoS, bindingType, schemaURIs, trustedAuthorities } =
    prepared.document
  const schemaMeta = {
    ...(id === undefined ? {} : { id }),
    version,
    rulebookURI,
    attestationLoS,
    bindingType,
    ...(schemaURIs.length ? { schemaURIs } : {}),
    ...(trustedAuthorities.length ? { trustedAuthorities } : {}),
    iat: Math.floor(signedAt.getTime() / 1000),
  }
  const payload = new TextEncoder().encode(JSON.stringify(schemaMeta))
  return {
    jws: await signDocumentBytes(signer, { typ: SIGNED_TS11_TYP }, payload),
    schemaMeta,
    integrity: subresourceIntegrity(payload),
    keyChainId,
    kid: signer.kid,
    alg: signer.alg,
    signedAt: signedAt.toISOString(),
  }
}

/** Checks and signs TS11 schema metadata (the peer's `config` form) without submitting it. */
export async function signTs11SchemaMeta(
  deps: Ts11Deps,
  tenantId: string,
  body: Ts11SignBody,
): Promise<SignedTs11SchemaMeta> {
  return signPreparedTs11(deps, await prepareTs11SchemaMeta(deps, tenantId, body))
}
