import {
  zAccessCertificate,
  zAccessCertificateRequest,
  zRegistrarConfig,
  zRegistrarConfigInput,
  zRegistrationCertificate,
  zRegistrationCertificateRequest,
  zRelyingPartyRegistration,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { createRegistrarService, type RegistrarServiceDeps } from '../services/registrar-service'
import { tenantSingleton } from './tenant-singleton'

const ROLES = ['registrar:manage'] as const

/**
 * The registrar integration (spec §1.3, role `registrar:manage`; docs/registrar.md) under
 * `/api/tenants/{tenantId}/registrar` and the token-tenant shorthand `/api/registrar`.
 */
export function registrarRoutes(
  deps: RegistrarServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const { base, op, params, tags, config, register } = tenantSingleton({
    collection: 'registrar',
    tenantInPath: mount.tenantInPath,
    roles: ROLES,
    input: zRegistrarConfigInput,
    output: zRegistrarConfig,
    operations: {
      get: {
        id: 'getRegistrarConfig',
        summary: 'The tenant’s registrar connection and registration (never the client secret)',
      },
      put: {
        id: 'putRegistrarConfig',
        summary: 'Create or replace the registrar connection',
        description:
          'URLs follow the outbound policy (https, public hosts unless OUTBOUND_ALLOWED_HOSTS). The client secret is stored encrypted; omit it to keep the stored one. A new `baseUrl` drops the registration.',
      },
      delete: {
        id: 'deleteRegistrarConfig',
        summary: 'Delete the registrar connection (certificates already stored stay)',
      },
    },
  })

  return async (app) => {
    const service = (req: Parameters<typeof requireTenantScope>[0]) =>
      createRegistrarService(deps, requireTenantScope(req), req.principal)
    register(app, (tenantId, principal) => createRegistrarService(deps, tenantId, principal))

    app.post(
      `${base}/relying-party`,
      {
        config,
        schema: {
          operationId: op('registerRelyingParty'),
          tags,
          summary: 'Register the tenant at the registrar as relying party and/or issuer',
          params,
          body: zRelyingPartyRegistration,
          response: { 200: zRegistrarConfig, ...problemResponses },
        },
      },
      (req) => service(req).registerRelyingParty(req.body),
    )

    app.post(
      `${base}/access-certificates`,
      {
        config,
        schema: {
          operationId: op('requestAccessCertificate'),
          tags,
          summary: 'Obtain an access certificate for a key chain’s active key and store it on the key chain',
          description:
            'The key chain’s public key goes to the registrar; the returned chain must certify it. Request objects signed with the key chain then carry it in `x5c`. Rotating the key chain replaces it with a generated certificate: request a new one after a rotation.',
          params,
          body: zAccessCertificateRequest,
          response: { 201: zAccessCertificate, ...problemResponses },
        },
      },
      async (req, reply) => reply.status(201).send(await service(req).requestAccessCertificate(req.body)),
    )

    app.post(
      `${base}/registration-certificates`,
      {
        config,
        schema: {
          operationId: op('requestRegistrationCertificate'),
          tags,
          summary: 'Obtain a registration certificate for a presentation configuration’s DCQL query',
          description:
            'Request objects of the configuration carry it as `verifier_info` (OpenID4VP 1.0 §5.1) while the configuration’s DCQL query is the one registered and the certificate has not expired. A new request replaces the stored certificate.',
          params,
          body: zRegistrationCertificateRequest,
          response: { 201: zRegistrationCertificate, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply.status(201).send(await service(req).requestRegistrationCertificate(req.body)),
    )
  }
}
