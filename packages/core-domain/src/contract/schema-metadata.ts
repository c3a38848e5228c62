import { z } from 'zod'
import { CREDENTIAL_FORMATS } from '../formats/registry'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'
import { zKeyChainId, zSigningAlgorithm } from './key-chain'

/** W3C Subresource Integrity metadata, e.g. `sha256-<base64 digest>` (used for `vct#integrity`). */
export const zIntegrity = z
  .string()
  .regex(/^sha(256|384|512)-[A-Za-z0-9+/]+={0,2}$/, 'Subresource Integrity metadata, e.g. `sha256-…`')
  .describe('W3C Subresource Integrity metadata (`sha256-<base64 digest>`)')

/** Semantic Versioning 2.0.0 (semver.org §2, §9, §10): `MAJOR.MINOR.PATCH[-pre][+build]`. */
export const zSemver = z
  .string()
  .max(100)
  .regex(
    /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/,
    'a semantic version (semver.org 2.0.0), e.g. `1.2.0`',
  )
  .describe('Semantic version (semver.org 2.0.0)')

const zText = z.string().min(1).max(2000)
const zLocale = z.string().regex(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, 'a BCP 47 language tag')

const zTypeDisplay = z
  .object({
    locale: zLocale,
    name: z.string().min(1).max(200),
    description: zText.optional(),
    rendering: z.record(z.string(), z.unknown()).optional().describe('`simple` and/or `svg_templates`'),
  })
  .loose()
  .meta({ id: 'TypeMetadataDisplay' })

const zClaimDisplay = z
  .object({ locale: zLocale, label: z.string().min(1).max(200), description: zText.optional() })
  .loose()
  .meta({ id: 'TypeMetadataClaimDisplay' })

const zTypeMetadataClaim = z
  .object({
    path: z
      .array(z.union([z.string().min(1).max(200), z.int().min(0), z.null()]))
      .min(1)
      .max(10)
      .describe('Claim path: strings select object members, integers array elements, null all elements'),
    display: z.array(zClaimDisplay).max(50).optional(),
    sd: z.enum(['always', 'allowed', 'never']).optional().describe('Selective disclosure of the claim'),
    mandatory: z.boolean().optional(),
    svg_id: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional(),
  })
  .loose()
  .meta({ id: 'TypeMetadataClaim' })

/**
 * SD-JWT VC Type Metadata (draft-ietf-oauth-sd-jwt-vc §"Type Metadata"). Known members are
 * checked; other members are kept and signed as sent, since the draft lets documents carry more.
 */
const typeMetadataShape = {
  vct: z.string().min(1).max(500).describe('The credential type this document describes'),
  name: z.string().min(1).max(200).optional(),
  description: zText.optional(),
  extends: z.string().min(1).max(500).optional().describe('vct of the type this one extends'),
  'extends#integrity': zIntegrity.optional(),
  display: z.array(zTypeDisplay).max(50).optional(),
  claims: z.array(zTypeMetadataClaim).max(500).optional(),
  schema: z.record(z.string(), z.unknown()).optional().describe('Embedded JSON Schema of the credential'),
  schema_uri: z.url().max(2000).optional().describe('Where the JSON Schema of the credential is'),
  'schema_uri#integrity': zIntegrity.optional(),
}
const schemaOrUri: [
  (metadata: { schema?: unknown; schema_uri?: unknown }) => boolean,
  { message: string; path: string[] },
] = [
  (metadata) => metadata.schema === undefined || metadata.schema_uri === undefined,
  { message: '`schema` and `schema_uri` exclude each other', path: ['schema_uri'] },
]

export const zTypeMetadata = z
  .object(typeMetadataShape)
  .loose()
  .refine(...schemaOrUri)
  .describe('SD-JWT VC Type Metadata document (draft-ietf-oauth-sd-jwt-vc)')
  .meta({ id: 'TypeMetadata' })
export type TypeMetadata = z.infer<typeof zTypeMetadata>

/** The members of a type metadata document given on top of a configuration (all optional). */
const zTypeMetadataOverrides = z
  .object({ ...typeMetadataShape, vct: typeMetadataShape.vct.optional() })
  .loose()
  .refine(...schemaOrUri)
  .describe('Type metadata members; with a credentialConfigId they replace the derived ones')
  .meta({ id: 'TypeMetadataMembers' })

/**
 * TS11 schema metadata as the peer product (EUDIPLO) sends it in `config` (EUDI Catalogue of
 * Attestations, draft): the attestation's version, rulebook, level of security, binding, schema
 * URIs per format and trusted authorities. Experimental like the draft.
 */
const zTs11SchemaUri = z
  .object({
    credentialConfigId: zConfigId
      .optional()
      .describe('Fill `format` and `metadata` (`vct` or `doctype`) from this credential configuration'),
    format: z.enum(CREDENTIAL_FORMATS).optional().describe('Attestation format of this schema'),
    uri: z.url().max(2000).optional().describe('Where the schema document for this format is (required)'),
    metadata: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Format-specific metadata, e.g. `{ "vct": … }` (dc+sd-jwt) or `{ "doctype": … }` (mso_mdoc)'),
  })
  .strict()
  .meta({ id: 'Ts11SchemaUri' })

const zTs11TrustAuthority = z
  .object({
    trustListId: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'The peer’s trust list reference; not supported here (422): give `frameworkType` and `value`',
      ),
    frameworkType: z.enum(['aki', 'etsi_tl', 'openid_federation']).optional(),
    value: z.string().min(1).max(2000).optional().describe('URI of the trust list or trust anchor'),
    isLoTE: z.boolean().optional().describe('A List of Trusted Entities'),
    verificationMethod: z.record(z.string(), z.unknown()).optional().describe('e.g. a JWK'),
  })
  .strict()
  .meta({ id: 'Ts11TrustAuthority' })

export const zTs11SchemaMetaConfig = z
  .object({
    id: z.string().min(1).max(500).optional().describe('Attestation identifier (URI), if already known'),
    version: zSemver.describe('Schema version'),
    rulebookURI: z.url().max(2000).describe('URI of the attestation rulebook'),
    attestationLoS: z.enum([
      'iso_18045_high',
      'iso_18045_moderate',
      'iso_18045_enhanced-basic',
      'iso_18045_basic',
    ]),
    bindingType: z.enum(['claim', 'key', 'biometric', 'none']),
    schemaURIs: z.array(zTs11SchemaUri).min(1).max(10).optional(),
    trustedAuthorities: z.array(zTs11TrustAuthority).max(20).optional(),
  })
  .strict()
  .describe('TS11 schema metadata, the peer product’s (EUDIPLO) `config` (experimental)')
  .meta({ id: 'Ts11SchemaMetaConfig' })
export type Ts11SchemaMetaConfig = z.infer<typeof zTs11SchemaMetaConfig>

const signShape = {
  credentialConfigId: zConfigId
    .optional()
    .describe(
      'Derive the document from this dc+sd-jwt credential configuration (vct, display, claims, schema)',
    ),
  metadata: zTypeMetadataOverrides.optional(),
  keyChainId: zKeyChainId
    .optional()
    .describe("Key chain to sign with; default: the credential configuration's key chain"),
}

type SignBody = {
  credentialConfigId?: string | undefined
  metadata?: { vct?: string | undefined } | undefined
  keyChainId?: string | undefined
  config?: unknown
}
// Without a configuration a document must say what it is and what signs it; a body with neither
// gets the one issue of the first rule. The TS11 form (`config`) has rules of its own.
const ts11 = (body: SignBody) => body.config !== undefined
const fromConfig = (body: SignBody) => body.credentialConfigId !== undefined
const needsSource = (body: SignBody) => ts11(body) || fromConfig(body) || body.metadata !== undefined
const needsVct = (body: SignBody) =>
  ts11(body) || !needsSource(body) || fromConfig(body) || body.metadata?.vct !== undefined
const needsKeyChain = (body: SignBody) =>
  ts11(body) || !needsSource(body) || fromConfig(body) || body.keyChainId !== undefined
const oneForm = (body: SignBody) => !ts11(body) || body.metadata === undefined
const submitsTs11 = (body: SignBody & { submitToRegistrar?: boolean | undefined }) =>
  body.submitToRegistrar === undefined || ts11(body)
const submitRule = {
  message: 'submission to the registrar is for the TS11 form (`config`) only',
  path: ['submitToRegistrar'],
}
const oneFormRule = {
  message: '`config` (TS11 schema metadata) and `metadata` (SD-JWT VC type metadata) exclude each other',
  path: ['config'],
}
const sourceRule = { message: 'give a credentialConfigId, a metadata document, or both', path: ['metadata'] }
const vctRule = { message: 'required when no credentialConfigId is given', path: ['metadata', 'vct'] }
const keyChainRule = { message: 'required when no credentialConfigId is given', path: ['keyChainId'] }

export const zSchemaMetadataSign = z
  .object({
    ...signShape,
    config: zTs11SchemaMetaConfig
      .optional()
      .describe(
        "The peer product's form (EUDIPLO): sign this TS11 schema metadata instead of type metadata. `keyChainId` then defaults to the credential configuration's, else the tenant's default key chain; `credentialConfigId` fills schema URIs that name no format",
      ),
    submitToRegistrar: z
      .boolean()
      .optional()
      .describe(
        "With `config`: submit the signed document to the tenant's registrar (PUT /api/registrar first). Unless `config.id` is given, an attestation id is reserved at the registrar first and signed into the document. Default false: nothing leaves the service",
      ),
  })
  .strict()
  .refine(oneForm, oneFormRule)
  .refine(submitsTs11, submitRule)
  .refine(needsSource, sourceRule)
  .refine(needsVct, vctRule)
  .refine(needsKeyChain, keyChainRule)
  .describe('What to sign: a credential configuration, a type metadata document, or a document on top of one')
  .meta({ id: 'SchemaMetadataSignRequest' })
export type SchemaMetadataSign = z.infer<typeof zSchemaMetadataSign>

export const zSchemaMetadataSignVersion = z
  .object({
    ...signShape,
    version: zSemver.describe('Version of this document; must be greater than the latest signed version'),
    config: z
      .never({
        error:
          'the TS11 form (`config`) is signed by /schema-metadata/sign; sign-version chains SD-JWT VC type metadata versions',
      })
      .optional()
      .describe('Not accepted here (the TS11 form is for `sign`)'),
    previousIntegrity: zIntegrity
      .optional()
      .describe(
        "`integrity` of the version this one follows; required once the vct has a signed version, and must equal the latest one's",
      ),
  })
  .strict()
  .refine(needsSource, sourceRule)
  .refine(needsVct, vctRule)
  .refine(needsKeyChain, keyChainRule)
  .describe('A new version of a type metadata document, chained to the previous version by its integrity')
  .meta({ id: 'SchemaMetadataSignVersionRequest' })
export type SchemaMetadataSignVersion = z.infer<typeof zSchemaMetadataSignVersion>

const signedShape = {
  jws: z
    .string()
    .describe(
      'Compact JWS; `typ` `vct-metadata+jwt`, `kid` and `x5c` of the key chain, `iat`; the payload is the document, byte for byte',
    ),
  /** The document as signed (the JWS payload); publish it at the vct URL. */
  metadata: zTypeMetadata,
  integrity: zIntegrity.describe(
    '`vct#integrity` value: SHA-256 Subresource Integrity of the JWS payload bytes',
  ),
  keyChainId: zKeyChainId,
  kid: z.string().describe('Key id of the signing key'),
  alg: zSigningAlgorithm,
  signedAt: zTimestamp,
}

export const zSignedSchemaMetadata = z
  .object(signedShape)
  .describe('A signed type metadata document')
  .meta({ id: 'SignedSchemaMetadata' })
export type SignedSchemaMetadata = z.infer<typeof zSignedSchemaMetadata>

/** Where a submitted TS11 document went: only present when `submitToRegistrar` was set. */
export const zTs11RegistrarEntry = z
  .object({
    id: z
      .string()
      .describe(
        'The attestation id signed into the document (`schemaMeta.id`): the one reserved at the registrar, or `config.id`',
      ),
    reserved: z.boolean().describe('Whether this request reserved `id` at the registrar'),
    entryId: z.string().describe("The registrar's identifier of the submitted entry"),
  })
  .describe("The registrar's entry for the submitted document")
  .meta({ id: 'Ts11RegistrarEntry' })
export type Ts11RegistrarEntry = z.infer<typeof zTs11RegistrarEntry>

export const zSignedTs11SchemaMeta = z
  .object({
    jws: z
      .string()
      .describe(
        'Compact JWS; `typ` `attestation-schema+jwt`, `kid` and `x5c` of the key chain; the payload is the document with `iat`, byte for byte',
      ),
    schemaMeta: z.record(z.string(), z.unknown()).describe('The TS11 document as signed (the JWS payload)'),
    integrity: zIntegrity.describe('SHA-256 Subresource Integrity of the JWS payload bytes'),
    keyChainId: zKeyChainId,
    kid: z.string().describe('Key id of the signing key'),
    alg: zSigningAlgorithm,
    signedAt: zTimestamp,
    registrar: zTs11RegistrarEntry.optional(),
  })
  .describe(
    'A signed TS11 schema metadata document (answer to the `config` form); `registrar` when it was submitted',
  )
  .meta({ id: 'SignedTs11SchemaMeta' })
export type SignedTs11SchemaMeta = z.infer<typeof zSignedTs11SchemaMeta>

export const zSignedSchemaMetadataVersion = z
  .object({
    ...signedShape,
    version: zSemver,
    previousVersion: zSemver
      .nullable()
      .describe('The version this one follows; null for the first recorded one'),
    previousIntegrity: zIntegrity.nullable(),
  })
  .describe('A signed version of a type metadata document')
  .meta({ id: 'SignedSchemaMetadataVersion' })
export type SignedSchemaMetadataVersion = z.infer<typeof zSignedSchemaMetadataVersion>
