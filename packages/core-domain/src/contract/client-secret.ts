import { z } from 'zod'

/**
 * The client secret we hold for a server we call (a login provider, an external authorization
 * server): one set of keep/replace/remove rules, so both resources answer alike. `use` says what
 * the secret is for; `absent` adds what leaving it out means beyond a replace.
 */
export function zClientSecretInput(use: string, absent = '') {
  return z
    .string()
    .min(1)
    .max(1000)
    .nullable()
    .optional()
    .describe(
      `Client secret (client_secret_basic) ${use}; stored encrypted, never returned. In a configuration import file keep it in a \`\${VAR}\` placeholder. ${absent}Absent on replace: the stored secret is kept only while \`issuer\` and \`clientId\` stay the same, otherwise 422; \`null\` removes it`,
    )
}

export const zHasClientSecret = z
  .boolean()
  .describe('Whether a client secret is stored (it is never returned)')
