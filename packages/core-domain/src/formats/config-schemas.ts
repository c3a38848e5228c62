import type { z } from 'zod'
import type { CredentialFormat } from './credential-format'
import { zJwtVcJsonConfig } from './jwt-vc-json/config'
import { zMdocConfig } from './mso-mdoc/config'
import { zSdJwtVcConfig } from './sd-jwt-vc/config'

/**
 * Each format's `config` member of a credential configuration: the discriminated union
 * `zIssuerMetadataConfig` is made of these (contract/credential-config.ts).
 */
export const configSchemas = {
  'dc+sd-jwt': zSdJwtVcConfig,
  mso_mdoc: zMdocConfig,
  jwt_vc_json: zJwtVcJsonConfig,
} satisfies { [F in CredentialFormat]: z.ZodType<{ format: F }> }

export type ConfigSchema = (typeof configSchemas)[CredentialFormat]
