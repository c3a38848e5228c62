import { z } from 'zod'

/** `GET /api/metrics`: Prometheus text exposition format 0.0.4 (docs/metrics.md lists the metrics). */
export const zMetricsText = z
  .string()
  .meta({ id: 'MetricsText', description: 'Prometheus text exposition format, version 0.0.4' })
export type MetricsText = z.infer<typeof zMetricsText>
