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

/** The DCQL `meta` of an mdoc query (OpenID4VP 1.0 B.2.3): the one doctype asked for. */
export const zMdocDcqlMeta = z.object({ doctype_value: z.string().min(1) }).strict()
