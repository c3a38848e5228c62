import { z } from 'zod'
import { configCommonShape } from '../config-shape'

/** The `config` of an ISO mdoc credential configuration (spec §2.2): its `docType`. */
export const zMdocConfig = z
  .object({
    format: z.literal('mso_mdoc'),
    docType: z.string().min(1).max(200).describe('mso_mdoc: document type, e.g. `org.iso.18013.5.1.mDL`'),
    ...configCommonShape,
  })
  .strict()
  .meta({ id: 'MdocIssuerMetadataConfig' })
