import {
  ConflictError,
  compareSemver,
  deriveTypeMetadata,
  InvalidInputError,
  NotFoundError,
  type Principal,
  RuleViolationError,
  type SchemaMetadataSign,
  type SchemaMetadataSignVersion,
  type SignedSchemaMetadata,
  type SignedSchemaMetadataVersion,
  type TypeMetadata,
} from '@credential-service/core-domain'
import { signJws, subresourceIntegrity } from '@credential-service/crypto'
import {
  createCredentialConfigRepository,
  createSchemaMetadataVersionRepository,
  type Database,
  uniqueViolation,
} from '@credential-service/db-schema'
import type { KeyRuntime } from '@credential-service/server-kit'

export interface SchemaMetadataServiceDeps {
  db: Database
  keys: Pick<KeyRuntime, 'signer'>
  now: () => Date
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
  /** The document to sign: derived from the configuration, with the body's members on top. */
  async function prepare(body: SchemaMetadataSign): Promise<{ metadata: TypeMetadata; keyChainId: string }> {
    const overrides = body.metadata ?? {}
    if (body.credentialConfigId === undefined) {
      return { metadata: overrides as TypeMetadata, keyChainId: body.keyChainId as string }
    }
    const id = body.credentialConfigId
    const config = await createCredentialConfigRepository(deps.db, tenantId).get(id)
    if (!config) throw new NotFoundError('credential configuration', id)
    if (config.config.format !== 'dc+sd-jwt') {
      const message = `type metadata describes dc+sd-jwt credentials; '${id}' is ${config.config.format}`
      throw new RuleViolationError(message, [{ path: 'body.credentialConfigId', message }])
    }
    if (overrides.vct !== undefined && overrides.vct !== config.config.vct) {
      const message = `must equal the configuration's vct '${config.config.vct}'`
      throw new InvalidInputError(`metadata.vct ${message}`, [{ path: 'body.metadata.vct', message }])
    }
    const metadata: Record<string, unknown> = { ...deriveTypeMetadata(config), ...overrides }
    // A given schema_uri replaces the derived schema: the draft allows one of the two.
    if (overrides.schema_uri !== undefined && overrides.schema === undefined) delete metadata.schema
    return { metadata: metadata as TypeMetadata, keyChainId: body.keyChainId ?? config.keyChainId }
  }

  /** Signs the document's bytes as the JWS payload, so `integrity` covers exactly what was signed. */
  async function signDocument(
    metadata: TypeMetadata,
    keyChainId: string,
    header: Record<string, unknown> = {},
  ): Promise<SignedSchemaMetadata> {
    const signer = await deps.keys.signer(tenantId, keyChainId)
    const signedAt = deps.now()
    const payload = new TextEncoder().encode(JSON.stringify(metadata))
    const jws = await signJws(
      signer,
      {
        typ: SIGNED_TYPE_METADATA_TYP,
        kid: signer.kid,
        ...(signer.x5c.length ? { x5c: signer.x5c } : {}),
        iat: Math.floor(signedAt.getTime() / 1000),
        ...header,
      },
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
    async sign(body: SchemaMetadataSign): Promise<SignedSchemaMetadata> {
      const { metadata, keyChainId } = await prepare(body)
      return signDocument(metadata, keyChainId)
    },

    /**
     * Signs the next version of the vct's chain: `version` above the latest signed one and
     * `previousIntegrity` equal to its integrity. The first version may name any predecessor
     * (say, a document signed with `sign` before versions were kept).
     */
    async signVersion(body: SchemaMetadataSignVersion): Promise<SignedSchemaMetadataVersion> {
      const { metadata, keyChainId } = await prepare(body)
      const versions = createSchemaMetadataVersionRepository(deps.db, tenantId)
      const latest = await versions.latest(metadata.vct)
      if (latest) {
        const head = `the latest signed version of '${metadata.vct}' is ${latest.version} (integrity ${latest.integrity})`
        if (body.previousIntegrity !== latest.integrity)
          throw new ConflictError(`previousIntegrity must name the latest version: ${head}`)
        if (compareSemver(body.version, latest.version) <= 0)
          throw new ConflictError(`version ${body.version} is not greater than ${latest.version}: ${head}`)
      }
      const previousIntegrity = body.previousIntegrity ?? null
      const signed = await signDocument(metadata, keyChainId, {
        version: body.version,
        ...(previousIntegrity ? { 'previous#integrity': previousIntegrity } : {}),
      })
      try {
        await versions.append({
          vct: metadata.vct,
          ordinal: (latest?.ordinal ?? 0) + 1,
          version: body.version,
          integrity: signed.integrity,
          previousIntegrity,
          keyChainId,
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
