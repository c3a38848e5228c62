import { z } from 'zod'
import { configCommonShape } from '../config-shape'

/** VCDM 2.0 §4.3: the base context, first in every credential this service issues. */
export const VCDM2_CONTEXT = 'https://www.w3.org/ns/credentials/v2'

const zVcType = z.string().min(1).max(500)

/**
 * The `config` of a W3C VC signed as a JWT, not using JSON-LD (spec §2.2; OpenID4VCI 1.0
 * Appendix A.1.1): its VC `type` array, published as `credential_definition.type`, and the
 * `@context` entries the credential carries after the VCDM 2.0 base context.
 */
export const zJwtVcJsonConfig = z
  .object({
    format: z.literal('jwt_vc_json'),
    type: z
      .array(zVcType)
      .min(1)
      .max(20)
      // VCDM 2.0 §4.5: "one value of the type property MUST be VerifiableCredential".
      .refine((types) => types.includes('VerifiableCredential'), 'the type must include VerifiableCredential')
      .refine((types) => new Set(types).size === types.length, 'each type once')
      .describe('jwt_vc_json: the VC `type` values, `VerifiableCredential` among them'),
    context: z
      .array(z.url().max(500))
      .max(20)
      .optional()
      .describe(`jwt_vc_json: \`@context\` entries after the base context ${VCDM2_CONTEXT}`),
    ...configCommonShape,
  })
  .strict()
  .meta({ id: 'JwtVcJsonIssuerMetadataConfig' })

/** The DCQL `meta` of a W3C VC query (OpenID4VP 1.0 B.1.1): "A non-empty array of string arrays". */
export const zJwtVcJsonDcqlMeta = z
  .object({
    type_values: z
      .array(z.array(z.string().min(1).max(500)).min(1).max(20))
      .min(1)
      .max(20),
  })
  .strict()
