import {
  type CredentialConfigData,
  checkCredentialConfig,
  checkDcqlQuery,
  checkRedirectUri,
  type OutboundUrlPolicy,
  type PresentationConfigData,
  type ValidationIssue,
} from '@credential-service/core-domain'
import {
  createAttributeProviderRepository,
  createCredentialConfigRepository,
  createKeyChainRepository,
  createWebhookEndpointRepository,
  type Database,
  type Executor,
} from '@credential-service/db-schema'

/** What a configuration may reference: ids that exist in the same tenant. */
async function missingReferences(
  db: Database,
  tenantId: string,
  refs: {
    keyChainId?: string | undefined
    attributeProviderId?: string | undefined
    webhookEndpointId?: string | undefined
  },
  prefix: string,
  tx: Executor,
): Promise<ValidationIssue[]> {
  const issues: ValidationIssue[] = []
  const check = async (field: string, id: string | undefined, exists: (id: string) => Promise<unknown>) => {
    if (id !== undefined && !(await exists(id)))
      issues.push({
        path: `${prefix}.${field}`,
        message: `no ${field.replace(/Id$/, '')} '${id}' in this tenant`,
      })
  }
  await check('keyChainId', refs.keyChainId, (id) => createKeyChainRepository(db, tenantId).get(id, tx))
  await check('attributeProviderId', refs.attributeProviderId, (id) =>
    createAttributeProviderRepository(db, tenantId).row(id, tx),
  )
  await check('webhookEndpointId', refs.webhookEndpointId, (id) =>
    createWebhookEndpointRepository(db, tenantId).row(id, tx),
  )
  return issues
}

/**
 * Every rule a credential configuration must pass beyond its shape, shared by the API and the
 * import: format rules, references within the tenant, and one credential type per scope (HAIP 4.3, I-06).
 */
export async function credentialConfigIssues(
  db: Database,
  tenantId: string,
  config: CredentialConfigData,
  options: { prefix?: string; tx?: Executor } = {},
): Promise<ValidationIssue[]> {
  const prefix = options.prefix ?? 'body'
  const tx = options.tx ?? db
  const issues = checkCredentialConfig(config).map((issue) => ({
    ...issue,
    path: issue.path.replace(/^body/, prefix),
  }))
  issues.push(...(await missingReferences(db, tenantId, config, prefix, tx)))
  const scope = config.config.scope ?? config.id
  const type = config.config.vct ?? config.config.docType
  for (const other of await createCredentialConfigRepository(db, tenantId).all(tx)) {
    if (
      other.id !== config.id &&
      other.config.scope === scope &&
      (other.config.vct ?? other.config.docType) !== type
    ) {
      issues.push({
        path: `${prefix}.config.scope`,
        message: `scope '${scope}' already names another credential type (configuration '${other.id}')`,
      })
    }
  }
  return issues
}

/**
 * Every rule a presentation configuration must pass beyond its shape, shared by the API and the
 * import: the DCQL rules, the redirect URI (https only), references within the tenant.
 */
export async function presentationConfigIssues(
  db: Database,
  tenantId: string,
  config: PresentationConfigData,
  options: { prefix?: string; tx?: Executor; outbound: OutboundUrlPolicy },
): Promise<ValidationIssue[]> {
  const prefix = options.prefix ?? 'body'
  return [
    ...checkDcqlQuery(config.dcqlQuery, `${prefix}.dcqlQuery`),
    ...(config.redirectUri === undefined
      ? []
      : checkRedirectUri(config.redirectUri, options.outbound, `${prefix}.redirectUri`)),
    ...(await missingReferences(db, tenantId, config, prefix, options.tx ?? db)),
  ]
}
