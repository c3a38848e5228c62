import {
  findRemovedCredentialFields,
  zAttributeProvider,
  zAttributeProviderInput,
  zAttributeProviderWithSecret,
  zClaimsJsonSchema,
  zConfigId,
  zCredentialConfig,
  zCredentialConfigInput,
  zLoginProvider,
  zLoginProviderInput,
  zPresentationConfig,
  zPresentationConfigInput,
  zWalletProvider,
  zWalletProviderInput,
  zWebhookEndpoint,
  zWebhookEndpointInput,
  zWebhookEndpointWithSecret,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import {
  type ConfigServiceDeps,
  createAttributeProviderService,
  createCredentialConfigService,
  createLoginProviderService,
  createPresentationConfigService,
  createWalletProviderService,
  createWebhookEndpointService,
} from '../services/config-service'
import { configCollectionRoutes } from './config-collection'

/** Credential and presentation configurations, attribute providers and webhook endpoints (spec §2.1–2.3, §4). */
export async function registerConfigRoutes(app: FastifyInstance, deps: ConfigServiceDeps) {
  for (const tenantInPath of [true, false]) {
    const mount = { tenantInPath }
    await app.register(
      configCollectionRoutes(
        {
          collection: 'credentials',
          itemKey: 'credentialConfigId',
          name: 'CredentialConfig',
          label: 'credential configuration',
          tag: 'credential-configs',
          roles: { read: ['issuance:config'], write: ['issuance:config'] },
          input: zCredentialConfigInput,
          output: zCredentialConfig,
          saved: zCredentialConfig,
          rawBodyIssues: (body) => findRemovedCredentialFields(body),
          service: (tenantId, req) => createCredentialConfigService(deps, tenantId, req.principal),
        },
        mount,
      ),
    )
    await app.register(credentialSchemaRoute(deps, mount))
    await app.register(
      configCollectionRoutes(
        {
          collection: 'presentations',
          itemKey: 'presentationConfigId',
          name: 'PresentationConfig',
          label: 'presentation configuration',
          tag: 'presentation-configs',
          roles: { read: ['presentation:config'], write: ['presentation:config'] },
          input: zPresentationConfigInput,
          output: zPresentationConfig,
          saved: zPresentationConfig,
          service: (tenantId, req) => createPresentationConfigService(deps, tenantId, req.principal),
        },
        mount,
      ),
    )
    await app.register(
      configCollectionRoutes(
        {
          collection: 'attribute-providers',
          itemKey: 'attributeProviderId',
          name: 'AttributeProvider',
          label: 'attribute provider',
          tag: 'attribute-providers',
          roles: { read: ['issuance:config'], write: ['issuance:config'] },
          input: zAttributeProviderInput,
          output: zAttributeProvider,
          saved: zAttributeProviderWithSecret,
          service: (tenantId, req) => createAttributeProviderService(deps, tenantId, req.principal),
        },
        mount,
      ),
    )
    await app.register(
      configCollectionRoutes(
        {
          collection: 'login-providers',
          itemKey: 'loginProviderId',
          name: 'LoginProvider',
          label: 'login provider',
          tag: 'login-providers',
          roles: { read: ['issuance:config'], write: ['issuance:config'] },
          input: zLoginProviderInput,
          output: zLoginProvider,
          saved: zLoginProvider,
          service: (tenantId, req) => createLoginProviderService(deps, tenantId, req.principal),
        },
        mount,
      ),
    )
    await app.register(
      configCollectionRoutes(
        {
          collection: 'wallet-providers',
          itemKey: 'walletProviderId',
          name: 'WalletProvider',
          label: 'wallet provider',
          tag: 'wallet-providers',
          roles: { read: ['issuance:config'], write: ['issuance:config'] },
          input: zWalletProviderInput,
          output: zWalletProvider,
          saved: zWalletProvider,
          service: (tenantId, req) => createWalletProviderService(deps, tenantId, req.principal),
        },
        mount,
      ),
    )
    await app.register(
      configCollectionRoutes(
        {
          collection: 'webhook-endpoints',
          itemKey: 'webhookEndpointId',
          name: 'WebhookEndpoint',
          label: 'webhook endpoint',
          tag: 'webhook-endpoints',
          roles: {
            read: ['issuance:config', 'presentation:config'],
            write: ['issuance:config', 'presentation:config'],
          },
          input: zWebhookEndpointInput,
          output: zWebhookEndpoint,
          saved: zWebhookEndpointWithSecret,
          service: (tenantId, req) => createWebhookEndpointService(deps, tenantId, req.principal),
        },
        mount,
      ),
    )
  }
}

function credentialSchemaRoute(
  deps: ConfigServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const paths = tenantMount({
    collection: 'credentials',
    tenantInPath: mount.tenantInPath,
    itemKey: 'credentialConfigId',
    itemSchema: zConfigId,
  })
  return async (app) => {
    app.get(
      `${paths.item}/schema`,
      {
        config: { roles: ['issuance:config', 'issuance:offer'] },
        schema: {
          operationId: paths.op('getCredentialClaimsSchema'),
          tags: ['credential-configs'],
          summary: 'JSON Schema of the claims, derived from `fields` at request time (never stored)',
          params: paths.itemParams,
          response: { 200: zClaimsJsonSchema, ...problemResponses },
        },
      },
      (req) =>
        createCredentialConfigService(deps, requireTenantScope(req), req.principal).schema(
          (req.params as { credentialConfigId: string }).credentialConfigId,
        ),
    )
  }
}
