import { createMetrics, createTenantCache, metricsEndpoint, runProcess } from '@credential-service/server-kit'
import { buildIssuerApp, parseIssuerConfig } from './app'

// Standalone issuer process (production): needs DATABASE_URL.
await runProcess({
  name: 'issuer',
  parseConfig: parseIssuerConfig,
  allowEmbeddedDatabase: false,
  build: async (config, database) => {
    const metrics = createMetrics({ tenantLabelLimit: config.METRICS_TENANT_LABEL_LIMIT, database })
    const tenants = createTenantCache({ db: database.db })
    // The pod's own /api/metrics, for Prometheus scraping each pod (the ingress sends /api elsewhere).
    return [
      buildIssuerApp({ config, database, metrics, tenants }),
      metricsEndpoint({ config, database, metrics, tenants }),
    ]
  },
})
