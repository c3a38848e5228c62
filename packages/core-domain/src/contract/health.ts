import { z } from 'zod'

export const zHealth = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    database: z.object({
      status: z.enum(['up', 'down']),
      kind: z.enum(['postgres', 'pglite']),
    }),
  })
  .meta({ id: 'Health' })
export type Health = z.infer<typeof zHealth>
