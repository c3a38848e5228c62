import { z } from 'zod'
import { configCommonShape } from '../config-shape'

/** The `config` of an SD-JWT VC credential configuration (spec §2.2): its `vct`. */
export const zSdJwtVcConfig = z
  .object({
    format: z.literal('dc+sd-jwt'),
    vct: z.string().min(1).max(500).describe('dc+sd-jwt: verifiable credential type'),
    ...configCommonShape,
  })
  .strict()
  .meta({ id: 'SdJwtVcIssuerMetadataConfig' })

/** The DCQL `meta` of an SD-JWT VC query (OpenID4VP 1.0 B.3.5): the `vct` values accepted. */
export const zSdJwtVcDcqlMeta = z.object({ vct_values: z.array(z.string().min(1)).min(1).max(20) }).strict()
