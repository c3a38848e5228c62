import {
  allFormatSpecs,
  ConflictError,
  compareSemver,
  credentialTypeOf,
  deriveTypeMetadata,
  ForbiddenError,
  formatSpec,
  InvalidInputError,
  NotFoundError,
  type Principal,
  RuleViolationError,
  type SchemaMetadataSign,
  type SchemaMetadataSignVersion,
  type SignedSchemaMetadata,
  type SignedSchemaMetadataVersion,
  type SignedTs11SchemaMeta,
  type TypeMetadata,
  zTypeMetadata,
} from '@credential-service/core-domain'
import { type JwkCipher, type Signer, subresourceIntegrity } from '@credential-service/crypto'
import {
  createCredentialConfigRepository,
  createSchemaMetadataVersionRepository,
  type Database,
  uniqueViolation,
} from '@credential-service/db-schema'
import type { KeyRuntime, OutboundPolicy } from '@credential-service/server-kit'
import { signDocumentBytes } from './schema-metadata-jws'
import { submitTs11SchemaMeta } from './submit-ts11-schema-meta'
import { signTs11SchemaMeta } from './ts11-schema-meta'

interface Prepared {
  metadata: TypeMetadata
  keyChainId: string
  signer: Signer
}

export interface SchemaMetadataServiceDeps {
  db: Database
  keys: Pick<KeyRuntime, 'signer'>
  /** Decrypts the tenant's registrar client secret (TS11 `submitToRegistrar`). */
  cipher: JwkCipher
  /** The policy registrar calls go through (TS11 `submitToRegistrar`). */
  outbound: OutboundPolicy
  now: () => Date
}

/**
 * The document of a version: `version` and `previous#integrity` members added. The body may
 * carry them already, but then with the request's values.
 */
function withVersion(
  metadata: TypeMetadata,
  version: string,
  previousIntegrity: string | null,
): TypeMetadata {
  const members = { version, 'previous#integrity': previousIntegrity ?? undefined }
  const issues = Object.entries(members)
    .filter(([name, value]) => name in metadata && (metadata as Record<string, unknown>)[name] !== value)
    .map(([name]) => ({
      path: `body.metadata.${name}`,
      message: `must equal the request's ${name === 'version' ? 'version' : 'previousIntegrity'}`,
    }))
  if (issues.length) throw new InvalidInputError('the document contradicts the request', issues)
  return { ...metadata, version, ...(previousIntegrity ? { 'previous#integrity': previousIntegrity } : {}) }
}

/** `typ` of the signed document: a JSON object payload, so a JWT in the RFC 7519 sense. */
export const SIGNED_TYPE_METADATA_TYP = 'vct-metadata+jwt'

/**
 * Signing of SD-JWT VC type metadata with a tenant's key chain (spec §4 notes 1 and 5,
 * experimental). `sign` is stateless; `sign-version` keeps one chain of versions per vct.
 */
export function createSchemaMetadataService(
  deps: SchemaMetadataServiceDeps,
  tenantId: string,
  actor: Principal,
) {
  /**
   * The document to sign (derived from the configuration, the body's members on top) and its
   * signer: an unknown configuration or key chain is a 404 before anything else is checked.
   */
  async function prepare(body: SchemaMetadataSign): Promise<Prepared> {
    const { metadata, keyChainId } = await documentOf(body)
    return { metadata, keyChainId, signer: await deps.keys.signer(tenantId, keyChainId) }
  }

  async function documentOf(
    body: SchemaMetadataSign,
  ): Promise<{ metadata: TypeMetadata; keyChainId: string }> {
    const overrides = body.metadata ?? {}
    if (body.credentialConfigId === undefined) {
      return { metadata: overrides as TypeMetadata, keyChainId: body.keyChainId as string }
    }
    const id = body.credentialConfigId
    const config = await createCredentialConfigRepository(deps.db, tenantId).get(id)
    if (!config) throw new NotFoundError('credential configuration', id)
    // SD-JWT VC Type Metadata describes the formats whose spec says so (dc+sd-jwt).
    const described = allFormatSpecs().filter((spec) => spec.typeMetadataDocument)
    if (!formatSpec(config.config.format).typeMetadataDocument) {
      const message = `type metadata describes ${described.map((spec) => spec.format).join(', ')} credentials; '${id}' is ${config.config.format}`
      throw new RuleViolationError(message, [{ path: 'body.credentialConfigId', message }])
    }
    const vct = credentialTypeOf(config.config)
    if (overrides.vct !== undefined && overrides.vct !== vct) {
      const message = `must equal the configuration's vct '${vct}'`
      throw new InvalidInputError(`metadata.vct ${message}`, [{ path: 'body.metadata.vct', message }])
    }
    const metadata: Record<string, unknown> = { ...deriveTypeMetadata(config), ...overrides }
    // A given schema_uri replaces the derived schema: the draft allows one of the two.
    if (overrides.schema_uri !== undefined && overrides.schema === undefined) delete metadata.schema
    return { metadata: metadata as TypeMetadata, keyChainId: body.keyChainId ?? config.keyChainId }
  }

  /** Signs the document's bytes as the JWS payload, so `integrity` covers exactly what was signed. */
  async function signDocument(prepared: Prepared): Promise<SignedSchemaMetadata> {
    const { keyChainId, signer } = prepared
    // In the member order the answer is serialised in, so the answer's document has these bytes.
    const metadata = zTypeMetadata.parse(prepared.metadata)
    const signedAt = deps.now()
    const payload = new TextEncoder().encode(JSON.stringify(metadata))
    const jws = await signDocumentBytes(
      signer,
      { typ: SIGNED_TYPE_METADATA_TYP, iat: Math.floor(signedAt.getTime() / 1000) },
      payload,
    )
    return {
      jws,
      metadata,
      integrity: subresourceIntegrity(payload),
      keyChainId,
      kid: signer.kid,
      alg: signer.alg,
      signedAt: signedAt.toISOString(),
    }
  }

  return {
    /**
     * SD-JWT VC type metadata (ours), or TS11 schema metadata (the peer's `config` form), which
     * `submitToRegistrar` also submits to the tenant's registrar.
     */
    async sign(body: SchemaMetadataSign): Promise<SignedSchemaMetadata | SignedTs11SchemaMeta> {
      if (body.config) {
        const { submitToRegistrar, ...ts11 } = { ...body, config: body.config }
        // Submitting publishes under the tenant's registration: the registrar role's to decide.
        if (submitToRegistrar && !actor.roles.includes('registrar:manage'))
          throw new ForbiddenError('submitToRegistrar needs the role registrar:manage as well')
        return submitToRegistrar
          ? submitTs11SchemaMeta(deps, tenantId, ts11)
          : signTs11SchemaMeta(deps, tenantId, ts11)
      }
      return signDocument(await prepare(body))
    },

    /**
     * Signs the next version of the vct's chain: `version` above the latest signed one and
     * `previousIntegrity` equal to its integrity. Both go into the document, so every version
     * has its own integrity even when nothing else changed. The first version may name any
     * predecessor (say, a document signed with `sign` before versions were kept).
     */
    async signVersion(body: SchemaMetadataSignVersion): Promise<SignedSchemaMetadataVersion> {
      const prepared = await prepare(body)
      const previousIntegrity = body.previousIntegrity ?? null
      const metadata = withVersion(prepared.metadata, body.version, previousIntegrity)
      const versions = createSchemaMetadataVersionRepository(deps.db, tenantId)
      const latest = await versions.latest(metadata.vct)
      if (latest) {
        const head = `the latest signed version of '${metadata.vct}' is ${latest.version} (integrity ${latest.integrity})`
        if (previousIntegrity !== latest.integrity)
          throw new ConflictError(`previousIntegrity must name the latest version: ${head}`)
        if (compareSemver(body.version, latest.version) <= 0)
          throw new ConflictError(`version ${body.version} is not greater than ${latest.version}: ${head}`)
      }
      const signed = await signDocument({ ...prepared, metadata })
      try {
        await versions.append({
          vct: metadata.vct,
          ordinal: (latest?.ordinal ?? 0) + 1,
          version: body.version,
          integrity: signed.integrity,
          previousIntegrity,
          keyChainId: prepared.keyChainId,
          kid: signed.kid,
          signedBy: actor.clientId,
          signedAt: new Date(signed.signedAt),
        })
      } catch (error) {
        if (uniqueViolation(error) === undefined) throw error
        throw new ConflictError(
          `another version of '${metadata.vct}' was signed at the same time; sign again on top of it`,
        )
      }
      return { ...signed, version: body.version, previousVersion: latest?.version ?? null, previousIntegrity }
    },
  }
}
