import { z } from 'zod'
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
}
// Without a configuration a document must say what it is and what signs it; a body with neither
// gets the one issue of the first rule.
const fromConfig = (body: SignBody) => body.credentialConfigId !== undefined
const needsSource = (body: SignBody) => fromConfig(body) || body.metadata !== undefined
const needsVct = (body: SignBody) =>
  !needsSource(body) || fromConfig(body) || body.metadata?.vct !== undefined
const needsKeyChain = (body: SignBody) =>
  !needsSource(body) || fromConfig(body) || body.keyChainId !== undefined
const sourceRule = { message: 'give a credentialConfigId, a metadata document, or both', path: ['metadata'] }
const vctRule = { message: 'required when no credentialConfigId is given', path: ['metadata', 'vct'] }
const keyChainRule = { message: 'required when no credentialConfigId is given', path: ['keyChainId'] }

export const zSchemaMetadataSign = z
  .object(signShape)
  .strict()
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
