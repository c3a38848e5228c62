import {
  zCredentialStatusChanged,
  zHandleStatusChange,
  zPage,
  zSessionStatusChange,
  zStatusList,
  zStatusListQuery,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import {
  type CredentialStatusServiceDeps,
  createCredentialStatusService,
} from '../services/credential-status-service'
import { sessionsMount } from './sessions'

const STATUS_NOTE = [
  'Credentials of configurations with `statusManagement` carry a Token Status List entry (draft-ietf-oauth-status-list): `valid`, `revoked` or `suspended`. Revocation is final: asking to make a revoked credential `valid` or `suspended` is 409.',
  'The change is audited and shows in the published status list (`{issuer}/status-lists/{id}`) from its next fetch; relying parties that cached the list see it within its `ttl` (300 s).',
].join('\n\n')

/** Revoke, suspend, reinstate issued credentials: by session and by the offer's business handle. */
export function credentialStatusRoutes(
  deps: CredentialStatusServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const sessions = sessionsMount(mount.tenantInPath)
  const statuses = tenantMount({
    collection: 'credential-status',
    tenantInPath: mount.tenantInPath,
    itemKey: 'handle',
    itemSchema: z.string(),
  })
  const lists = tenantMount({
    collection: 'status-lists',
    tenantInPath: mount.tenantInPath,
    itemKey: 'statusListId',
    itemSchema: z.string().max(100),
  })
  const tags = ['credential-status']
  const LIST_NOTE =
    'Lists open per key chain as credentials of configurations with `statusManagement` are issued; each is published, signed, at its `uri`. What a list holds per credential is changed with the status routes.'

  return async (app) => {
    const service = (req: FastifyRequest) =>
      createCredentialStatusService(deps, requireTenantScope(req), req.principal)

    app.post(
      `${sessions.item}/status`,
      {
        config: { roles: ['issuance:offer'] },
        schema: {
          operationId: sessions.op('changeSessionStatus'),
          tags,
          summary: 'Revoke, suspend or reinstate every credential issued in an issuance session',
          description: [
            STATUS_NOTE,
            'A session that issued no credential with a status list entry is 409. The entries keep the session id: this works after the session itself was deleted (by you or the retention job).',
          ].join('\n\n'),
          params: sessions.itemParams,
          body: zSessionStatusChange,
          response: { 200: zCredentialStatusChanged, ...problemResponses },
        },
      },
      (req) => service(req).ofSession(req.params.id, req.body.status),
    )

    app.post(
      statuses.base,
      {
        config: { roles: ['issuance:offer'] },
        schema: {
          operationId: statuses.op('changeCredentialStatus'),
          tags,
          summary: 'Revoke, suspend or reinstate the credentials of a status handle',
          description: [
            STATUS_NOTE,
            'The handle is the `statusHandle` given when creating offers; every credential with a status list entry issued for them changes. An unknown handle is 404. Handles are recorded in the audit trail: use references, never personal data.',
          ].join('\n\n'),
          params: statuses.listParams,
          body: zHandleStatusChange,
          response: { 200: zCredentialStatusChanged, ...problemResponses },
        },
      },
      (req) => service(req).ofHandle(req.body.handle, req.body.status),
    )

    app.get(
      lists.base,
      {
        config: { roles: ['issuance:offer', 'issuance:config'] },
        schema: {
          operationId: lists.op('listStatusLists'),
          tags,
          summary: 'List the status lists of the tenant',
          description: LIST_NOTE,
          params: lists.listParams,
          querystring: zStatusListQuery,
          response: { 200: zPage(zStatusList), ...problemResponses },
        },
      },
      (req) => service(req).lists(req.query),
    )

    app.get(
      lists.item,
      {
        config: { roles: ['issuance:offer', 'issuance:config'] },
        schema: {
          operationId: lists.op('getStatusList'),
          tags,
          summary: 'Get a status list of the tenant',
          description: LIST_NOTE,
          params: lists.itemParams,
          response: { 200: zStatusList, ...problemResponses },
        },
      },
      (req) => service(req).list(req.params.statusListId),
    )
  }
}
