import { z } from 'zod'

export const zLocale = z.string().regex(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, 'a BCP 47 language tag')

/** What every format's `config` member holds besides `format` and its type (spec §2.2). */
export const configCommonShape = {
  scope: z
    .string()
    .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'an RFC 6749 scope token')
    .optional()
    .describe('OAuth scope of this credential (HAIP 4.3); defaults to the configuration id'),
  display: z
    .array(z.object({ name: z.string().min(1).max(200), locale: zLocale }).loose())
    .max(50)
    .optional()
    .describe('Credential display per locale; extra members (logo, colours) are passed through'),
}
