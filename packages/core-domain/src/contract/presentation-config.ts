import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'
import { zDcqlQuery } from './dcql'
import { zKeyChainId } from './key-chain'

export const zPresentationConfigInput = z
  .object({
    id: zConfigId,
    description: z.string().max(2000).optional(),
    dcqlQuery: zDcqlQuery.describe('What to ask the wallet for (OpenID4VP 1.0 §6)'),
    lifetimeSeconds: z
      .number()
      .int()
      .min(30)
      .max(86_400)
      .default(300)
      .describe('How long a request stays answerable'),
    responseMode: z
      .enum(['direct_post', 'direct_post.jwt'])
      .default('direct_post.jwt')
      .describe('HAIP asks for direct_post.jwt'),
    transactionDataTypes: z
      .array(z.string().min(1).max(200))
      .max(20)
      .optional()
      .describe('Transaction data types requests may carry'),
    webhookEndpointId: zConfigId.optional().describe('Where results are delivered'),
    redirectUri: z.url().optional().describe('Same-device flows: where the wallet sends the user back'),
    keyChainId: zKeyChainId.describe('Key chain that signs request objects'),
  })
  .strict()
export type PresentationConfigInput = z.input<typeof zPresentationConfigInput>
export type PresentationConfigData = z.output<typeof zPresentationConfigInput>

export const zPresentationConfig = zPresentationConfigInput.extend({
  lifetimeSeconds: z.number().int(),
  responseMode: z.enum(['direct_post', 'direct_post.jwt']),
  createdAt: zTimestamp,
  updatedAt: zTimestamp,
})
export type PresentationConfig = z.infer<typeof zPresentationConfig>
