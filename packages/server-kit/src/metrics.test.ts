import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { createMetrics } from './metrics'

/** A Fastify app with one tenant route, counted as the issuer. */
async function appWith(metrics: ReturnType<typeof createMetrics>) {
  const app = Fastify()
  await app.register(async (scope) => {
    metrics.observeRequests(scope, 'issuer')
    scope.get('/issuers/:tenant/offers/:id', async (request, reply) =>
      (request.params as { id: string }).id === 'missing' ? reply.status(404).send({}) : {},
    )
  })
  return app
}

const series = (text: string, name: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`credential_service_${name}`))
    .map((line) => line.replace(/ [^ ]+$/, ''))

describe('createMetrics', () => {
  it('metrics: registries are per instance; two in one process register the same names without error', async () => {
    const first = createMetrics()
    const second = createMetrics({ processMetrics: false })
    first.offerCreated('acme')
    expect(await first.render()).toContain(
      'credential_service_credential_offers_created_total{tenant="acme"} 1',
    )
    expect(await second.render()).not.toContain('tenant="acme"')
    expect(await second.render()).not.toContain('process_cpu')
  })

  it('metrics: the tenant label is capped (METRICS_TENANT_LABEL_LIMIT); later tenants count as _other', async () => {
    const metrics = createMetrics({ tenantLabelLimit: 2, processMetrics: false })
    for (const tenant of ['t-1', 't-2', 't-3']) metrics.offerCreated(tenant)
    metrics.offerCreated('t-1')
    const text = await metrics.render()
    expect(text).toContain('credential_service_credential_offers_created_total{tenant="t-1"} 2')
    expect(text).toContain('credential_service_credential_offers_created_total{tenant="t-2"} 1')
    expect(text).toContain('credential_service_credential_offers_created_total{tenant="_other"} 1')
    expect(text).toContain('credential_service_metrics_tenant_labels 2')
  })

  it('metrics: a request is labelled by route template; a tenant answered only with errors stays _other', async () => {
    const metrics = createMetrics({ processMetrics: false })
    const app = await appWith(metrics)
    await app.inject({ url: '/issuers/acme/offers/missing' })
    await app.inject({ url: '/issuers/acme/offers/ses_secret1' })
    await app.inject({ url: '/issuers/acme/offers/missing' })
    await app.inject({ url: '/not-routed/ses_secret2' })
    const text = await metrics.render()
    expect(series(text, 'http_requests_total')).toStrictEqual([
      'credential_service_http_requests_total{app="issuer",tenant="_other",route="/issuers/:tenant/offers/:id",method="GET",status_class="4xx"}',
      'credential_service_http_requests_total{app="issuer",tenant="acme",route="/issuers/:tenant/offers/:id",method="GET",status_class="2xx"}',
      'credential_service_http_requests_total{app="issuer",tenant="acme",route="/issuers/:tenant/offers/:id",method="GET",status_class="4xx"}',
    ])
    expect(series(text, 'http_request_errors_total')).toStrictEqual([
      'credential_service_http_request_errors_total{app="issuer",tenant="_other",route="/issuers/:tenant/offers/:id",method="GET",status="404"}',
      'credential_service_http_request_errors_total{app="issuer",tenant="acme",route="/issuers/:tenant/offers/:id",method="GET",status="404"}',
    ])
    expect(text).not.toMatch(/ses_secret|not-routed/)
    await app.close()
  })

  it('metrics: the webhook outbox hook is read on each scrape once wired', async () => {
    const metrics = createMetrics({ processMetrics: false })
    expect(await metrics.render()).not.toContain('webhook_outbox')
    let pending = 3
    metrics.watchWebhookOutbox(async () => ({ pending, failed: 1 }))
    expect(series(await metrics.render(), 'webhook_outbox_deliveries')).toStrictEqual([
      'credential_service_webhook_outbox_deliveries{state="pending"}',
      'credential_service_webhook_outbox_deliveries{state="failed"}',
    ])
    pending = 0
    expect(await metrics.render()).toContain(
      'credential_service_webhook_outbox_deliveries{state="pending"} 0',
    )
    const done = metrics.webhookDelivery('acme')
    expect(await metrics.render()).toContain('credential_service_webhook_deliveries_in_flight 1')
    done('failed')
    const text = await metrics.render()
    expect(text).toContain('credential_service_webhook_deliveries_in_flight 0')
    expect(text).toContain('credential_service_webhook_deliveries_total{tenant="acme",outcome="failed"} 1')
  })

  it('metrics: rendered for a tenant, only that tenant’s samples of tenant-labelled families remain', async () => {
    const metrics = createMetrics()
    metrics.offerCreated('acme')
    metrics.offerCreated('acme-2')
    metrics.credentialsIssued('acme-2', 'mso_mdoc', 2)
    const text = await metrics.render('acme')
    expect(text).toContain('credential_service_credential_offers_created_total{tenant="acme"} 1')
    expect(text).not.toContain('acme-2')
    expect(text).not.toContain('process_cpu')
    expect(text).toContain('# TYPE credential_service_credentials_issued_total counter')
  })
})
