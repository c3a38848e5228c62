import {
  zSchemaMetadataSign,
  zSchemaMetadataSignVersion,
  zSignedSchemaMetadata,
  zSignedSchemaMetadataVersion,
  zSignedTs11SchemaMeta,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  createSchemaMetadataService,
  type SchemaMetadataServiceDeps,
} from '../services/schema-metadata-service'

const ROLES = ['issuance:config'] as const
const EXPERIMENTAL =
  'Experimental (spec §4 note 1): this feature may change in a minor release. Moved in 5.0 from `/api/issuer/credentials/schema-metadata/…`.'

/**
 * Schema-metadata signing (spec §4, §9.2) at `/api/tenants/{tenantId}/schema-metadata/…` and the
 * token-tenant shorthand `/api/schema-metadata/…`. The 4.x paths under `/api/issuer/credentials`
 * are gone and answer 404.
 */
export function schemaMetadataRoutes(
  deps: SchemaMetadataServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const { base, op, listParams } = tenantMount({
    collection: 'schema-metadata',
    tenantInPath: mount.tenantInPath,
    itemKey: 'unused',
    itemSchema: z.string(),
  })
  const tags = ['schema-metadata']

  return async (app) => {
    const service = (req: Parameters<typeof requireTenantScope>[0]) =>
      createSchemaMetadataService(deps, requireTenantScope(req), req.principal)

    app.post(
      `${base}/sign`,
      {
        config: { roles: ROLES },
        schema: {
          operationId: op('signSchemaMetadata'),
          tags,
          summary: '[Experimental] Sign SD-JWT VC type metadata with a key chain',
          description: `${EXPERIMENTAL}\n\nSigns a type metadata document (given, derived from a dc+sd-jwt credential configuration, or both: given members replace derived ones) as a compact JWS with the key chain's key, \`kid\` and \`x5c\`. The answer carries the \`integrity\` value to put in credentials as \`vct#integrity\`. Nothing is stored.\n\nThe peer product's form (EUDIPLO) is accepted too: \`{ config, keyChainId?, credentialConfigId? }\` with \`config\` TS11 schema metadata (version, rulebookURI, attestationLoS, bindingType, schemaURIs, trustedAuthorities). It is signed as an \`attestation-schema+jwt\` JWS and answered as \`SignedTs11SchemaMeta\`; the key chain defaults to the credential configuration's, else the tenant's default key chain. With \`submitToRegistrar: true\` (which needs \`registrar:manage\` as well) the document also goes to the tenant's registrar, as the peer does it: an attestation id is reserved there (unless \`config.id\` is given) and signed in, the JWS is submitted, and the answer's \`registrar\` names the id and the registrar's entry; no registrar connection is a 422, a registrar failure a 502 naming the step. Unlike the peer, submission is opt-in and no URL is fetched (no integrity of the rulebook or schemas).`,
          'x-experimental': true,
          params: listParams,
          body: zSchemaMetadataSign,
          response: { 200: z.union([zSignedSchemaMetadata, zSignedTs11SchemaMeta]), ...problemResponses },
        },
      },
      (req) => service(req).sign(req.body),
    )

    app.post(
      `${base}/sign-version`,
      {
        config: { roles: ROLES },
        schema: {
          operationId: op('signSchemaMetadataVersion'),
          tags,
          summary: '[Experimental] Sign a new version of SD-JWT VC type metadata',
          description: `${EXPERIMENTAL}\n\nLike sign, for a versioned document: \`version\` (semver) must be greater than the vct's latest signed version and \`previousIntegrity\` must equal that version's \`integrity\` (409 otherwise). The document gets \`version\` and \`previous#integrity\` members; the version and its integrity are recorded per tenant and vct.`,
          'x-experimental': true,
          params: listParams,
          body: zSchemaMetadataSignVersion,
          response: { 201: zSignedSchemaMetadataVersion, ...problemResponses },
        },
      },
      async (req, reply) => reply.status(201).send(await service(req).signVersion(req.body)),
    )
  }
}
