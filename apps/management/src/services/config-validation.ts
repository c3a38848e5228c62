import {
  type CredentialConfig,
  type CredentialConfigData,
  checkCredentialConfig,
  checkDcApiSettings,
  checkDcqlQuery,
  checkRedirectUri,
  claimPath,
  credentialTypeOf,
  formatSpec,
  type LoginProviderData,
  type OutboundUrlPolicy,
  type PresentationConfigData,
  presentedClaimIssues,
  type ValidationIssue,
} from '@credential-service/core-domain'
import {
  anchorAuthorityKeyIds,
  parseCertificate,
  verifierAttestationIssues,
} from '@credential-service/crypto'
import {
  createAttributeProviderRepository,
  createCredentialConfigRepository,
  createFederationRepository,
  createKeyChainRepository,
  createLoginProviderRepository,
  createPresentationConfigRepository,
  createTrustListRepository,
  createWebhookEndpointRepository,
  type Database,
  type Executor,
} from '@credential-service/db-schema'
import { issuerTrustAnchors } from '@credential-service/server-kit'
import { selfSignedChainIssues } from './self-signed-chain'

/** What a configuration may reference: ids that exist in the same tenant. */
async function missingReferences(
  db: Database,
  tenantId: string,
  refs: {
    keyChainId?: string | undefined
    attributeProviderId?: string | undefined
    webhookEndpointId?: string | undefined
    loginProviderId?: string | undefined
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
  // The federation entity key signs entity statements only (docs/federation.md).
  if (
    refs.keyChainId !== undefined &&
    (await createFederationRepository(db, tenantId).get(tx))?.keyChainId === refs.keyChainId
  )
    issues.push({
      path: `${prefix}.keyChainId`,
      message: `key chain '${refs.keyChainId}' signs the federation entity configurations; use another key chain`,
    })
  await check('attributeProviderId', refs.attributeProviderId, (id) =>
    createAttributeProviderRepository(db, tenantId).row(id, tx),
  )
  await check('webhookEndpointId', refs.webhookEndpointId, (id) =>
    createWebhookEndpointRepository(db, tenantId).row(id, tx),
  )
  await check('userAuthentication.loginProviderId', refs.loginProviderId, (id) =>
    createLoginProviderRepository(db, tenantId).row(id, tx),
  )
  return issues
}

/**
 * Named trust lists that the tenant lacks, each by its index. The ones found stay locked (FOR
 * SHARE) until the saving transaction ends, so none can be deleted between check and commit.
 */
export async function missingTrustLists(
  db: Database,
  tenantId: string,
  ids: string[] | undefined,
  prefix: string,
  tx: Executor,
): Promise<ValidationIssue[]> {
  if (!ids?.length) return []
  const found = await createTrustListRepository(db, tenantId).lockExisting(ids, tx)
  return ids.flatMap((id, index) =>
    found.has(id)
      ? []
      : [{ path: `${prefix}.trustListIds.${index}`, message: `no trust list '${id}' in this tenant` }],
  )
}

/** The countryName (C=) of a distinguished name as node:crypto prints it, one RDN a line. */
const countryOf = (dn: string) => dn.split('\n').find((line) => line.startsWith('C='))

/**
 * ISO 18013-5 Annex B.1 names the issuing country (countryName) in the subject and the issuer of
 * the IACA and Document Signer certificates, and readers check it against the MSO: a configuration
 * of a format whose spec says `certificateCountry` (mso_mdoc) needs a key chain whose leaf
 * certificate carries C= in both.
 */
async function certificateCountryIssues(
  db: Database,
  tenantId: string,
  config: CredentialConfigData,
  prefix: string,
  tx: Executor,
  defaultKeyChain: { created: boolean } | undefined,
): Promise<ValidationIssue[]> {
  const { format } = config.config
  if (!formatSpec(format).certificateCountry) return []
  const chain = await createKeyChainRepository(db, tenantId).get(config.keyChainId, tx)
  if (!chain) return [] // reported as a missing reference
  const path = `${prefix}.keyChainId`
  const [leaf] = chain.activeCertificates
  if (!leaf) {
    return [
      { path, message: `${format} needs a document signer certificate; key chain '${chain.id}' has none` },
    ]
  }
  const certificate = parseCertificate(leaf)
  const missing = [
    countryOf(certificate.subject) ? undefined : 'subject',
    countryOf(certificate.issuer) ? undefined : 'issuer',
  ].filter((part) => part !== undefined)
  if (missing.length === 0) return []
  const needs = `${format} needs a country (C=) in the certificate ${missing.join(' and ')} (ISO 18013-5 Annex B.1)`
  const named = 'name in `keyChainId` a key chain made with `certificate.country`'
  const tenant = `PATCH /api/tenants/${tenantId}`
  const setCountry = `\`country\` in ${tenant} or tenant.json, ISO 3166-1 alpha-2, e.g. {"country": "DE"}`
  const message = !defaultKeyChain
    ? `${needs}; key chain '${chain.id}' has none`
    : defaultKeyChain.created
      ? `${needs}, and the tenant states no country for its default key chain: set it (${setCountry}) and try again, or ${named} (nothing was created)`
      : `${needs}; the tenant's default key chain '${chain.id}' names none (it was made without a country): ${named}, or make such a key chain the default (${tenant} {"defaultKeyChainId": "<id>"})`
  return [{ path, message }]
}

/**
 * Every rule a credential configuration must pass beyond its shape, shared by the API and the
 * import: format rules, references within the tenant, and one credential type per scope (HAIP 4.3, I-06).
 */
export async function credentialConfigIssues(
  db: Database,
  tenantId: string,
  config: CredentialConfigData,
  options: {
    prefix?: string
    tx?: Executor
    /** The configuration names no key chain: the tenant's default signs it. */
    defaultKeyChain?: { created: boolean } | undefined
  } = {},
): Promise<ValidationIssue[]> {
  const prefix = options.prefix ?? 'body'
  const tx = options.tx ?? db
  const issues = checkCredentialConfig(config).map((issue) => ({
    ...issue,
    path: issue.path.replace(/^body/, prefix),
  }))
  issues.push(
    ...(await missingReferences(
      db,
      tenantId,
      { ...config, loginProviderId: config.userAuthentication?.loginProviderId },
      prefix,
      tx,
    )),
  )
  // userAuthentication.claims keys name fields: a typo would silently leave the field empty.
  const paths = new Set(config.fields.map((f) => claimPath(f).join('.')))
  for (const key of Object.keys(config.userAuthentication?.claims ?? {}))
    if (!paths.has(key))
      issues.push({
        path: `${prefix}.userAuthentication.claims.${key}`,
        message: 'not a field path of this configuration',
      })
  const providerId = config.userAuthentication?.loginProviderId
  const provider = providerId
    ? await createLoginProviderRepository(db, tenantId).row(providerId, tx)
    : undefined
  if (provider) issues.push(...(await loginClaimIssues(db, tenantId, config, provider, prefix, tx)))
  issues.push(...(await certificateCountryIssues(db, tenantId, config, prefix, tx, options.defaultKeyChain)))
  const chain = await createKeyChainRepository(db, tenantId).get(config.keyChainId, tx)
  if (chain) issues.push(...selfSignedChainIssues(chain, config, prefix))
  const scope = config.config.scope ?? config.id
  const type = credentialTypeOf(config.config)
  for (const other of await createCredentialConfigRepository(db, tenantId).all(tx)) {
    if (other.id !== config.id && other.config.scope === scope && credentialTypeOf(other.config) !== type) {
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
  options: {
    prefix?: string
    tx?: Executor
    outbound: OutboundUrlPolicy
    /** PUBLIC_URL and the clock, for the verifier attestation's `sub` and `exp`. */
    verifier: { publicUrl: string; now: () => Date }
    /** Credential configurations replaced in the same import: checked when they are applied. */
    replacedCredentialIds?: ReadonlySet<string>
  },
): Promise<ValidationIssue[]> {
  const prefix = options.prefix ?? 'body'
  const missing = await missingReferences(db, tenantId, config, prefix, options.tx ?? db)
  return [
    ...checkDcqlQuery(config.dcqlQuery, `${prefix}.dcqlQuery`),
    ...(config.redirectUri === undefined
      ? []
      : checkRedirectUri(config.redirectUri, options.outbound, `${prefix}.redirectUri`)),
    ...checkDcApiSettings(config, options.outbound, `${prefix}.dcApi`),
    ...missing,
    ...(await missingTrustLists(db, tenantId, config.trustListIds, prefix, options.tx ?? db)),
    ...(missing.length ? [] : await verifierAttestationFieldIssues(db, tenantId, config, prefix, options)),
    ...federationPrefixIssues(config, prefix),
    ...(await trustedAuthorityIssues(db, tenantId, config, prefix, options.tx ?? db)),
    ...(await loginMappingIssues(
      db,
      tenantId,
      config,
      prefix,
      options.tx ?? db,
      options.replacedCredentialIds,
    )),
  ]
}

/**
 * Presentation during issuance: credential configurations logging in with a `presentation`
 * provider that names this configuration map claims its DCQL query must still ask for (a replace
 * that drops one would leave their fields silently empty).
 */
async function loginMappingIssues(
  db: Database,
  tenantId: string,
  config: PresentationConfigData,
  prefix: string,
  tx: Executor,
  replacedCredentialIds: ReadonlySet<string> = new Set(),
): Promise<ValidationIssue[]> {
  const providers = (await createLoginProviderRepository(db, tenantId).all(tx)).filter(
    (p) => p.kind === 'presentation' && p.presentationConfigId === config.id,
  )
  if (!providers.length) return []
  const ids = new Set(providers.map((p) => p.id))
  const known = await knownCredentialTypes(db, tenantId, tx)
  const issues: ValidationIssue[] = []
  for (const credential of await createCredentialConfigRepository(db, tenantId).all(tx)) {
    const auth = credential.userAuthentication
    if (!auth || !ids.has(auth.loginProviderId) || replacedCredentialIds.has(credential.id)) continue
    const found = presentedClaimIssues(
      auth.claims ?? {},
      credential.fields,
      config,
      known,
      `credential '${credential.id}'`,
    )
    issues.push(
      ...found.map((issue) => ({ path: `${prefix}.dcqlQuery`, message: `${issue.path}: ${issue.message}` })),
    )
  }
  return issues
}

/** The credential types this tenant issues, by their fields: what a presented one of them holds. */
async function knownCredentialTypes(db: Database, tenantId: string, tx: Executor) {
  return (await createCredentialConfigRepository(db, tenantId).all(tx)).map((c) => ({
    format: c.config.format,
    type: credentialTypeOf(c.config),
    fields: c.fields,
  }))
}

/**
 * OpenID4VP 1.0 §6.1.1: a Trusted Authorities Query must name what this configuration trusts, or
 * no credential under it could verify. `aki` (§6.1.1.1): a value anchorAuthorityKeyIds gives for
 * its issuer trust anchors (the certificates its trust lists hold, the tenant's key chains).
 * `etsi_tl` (§6.1.1.2): the URL of one of its `trustListIds` lists of source type `etsi-tl` or
 * `etsi-lotl` (ETSI TS 119 612). `openid_federation`: a trust list of source type `openid-federation`
 * among its `trustListIds`. `from-anchors` names the anchors, which acceptAnyIssuer does without.
 */
async function trustedAuthorityIssues(
  db: Database,
  tenantId: string,
  config: PresentationConfigData,
  prefix: string,
  tx: Executor,
): Promise<ValidationIssue[]> {
  const issues: ValidationIssue[] = []
  if (config.trustedAuthorities && config.acceptAnyIssuer)
    issues.push({
      path: `${prefix}.trustedAuthorities`,
      message: 'acceptAnyIssuer trusts every issuer: there are no trust anchors to name',
    })
  const queries = config.dcqlQuery.credentials.map((credential) => credential.trusted_authorities ?? [])
  const types = new Set(queries.flatMap((authorities) => authorities.map((authority) => authority.type)))
  if (!types.has('aki') && !types.has('etsi_tl') && !types.has('openid_federation')) return issues
  const named = new Set(config.trustListIds ?? [])
  // Every certificate a named list holds, whatever its state: a list past NextUpdate may come back.
  const lists = (await createTrustListRepository(db, tenantId).rows(tx)).filter((row) => named.has(row.id))
  const federated = lists.some((list) => list.source.type === 'openid-federation')
  const keyChains = types.has('aki') ? await createKeyChainRepository(db, tenantId).all(tx) : []
  const known = new Set(
    types.has('aki')
      ? await anchorAuthorityKeyIds(
          issuerTrustAnchors(
            keyChains,
            lists.flatMap((list) => list.certificates),
          ),
        )
      : [],
  )
  const urls = new Set(
    lists.flatMap((list) =>
      list.source.type === 'etsi-tl' || list.source.type === 'etsi-lotl' ? [list.source.url] : [],
    ),
  )
  queries.forEach((authorities, c) => {
    authorities.forEach((authority, t) => {
      const at = `${prefix}.dcqlQuery.credentials.${c}.trusted_authorities.${t}`
      if (authority.type === 'etsi_tl')
        authority.values.forEach((value, v) => {
          if (!urls.has(value))
            issues.push({
              path: `${at}.values.${v}`,
              message: `etsi_tl ${value} is the URL of none of this configuration's trust lists (trustListIds) of source type etsi-tl or etsi-lotl: no credential under it could verify`,
            })
        })
      // An intermediate may be named too, which only a resolved chain shows: the values are checked
      // at verification; at save the configuration must have a trust anchor to resolve to.
      // (Other formats are refused by the DCQL rules already.)
      const sdJwt = config.dcqlQuery.credentials[c]?.format === 'dc+sd-jwt'
      if (authority.type === 'openid_federation' && !federated && sdJwt)
        issues.push({
          path: `${at}.type`,
          message:
            "openid_federation needs a trust list of source type openid-federation in this configuration's trustListIds: no credential under it could verify",
        })
      const unknown = authority.type === 'aki' ? authority.values.filter((value) => !known.has(value)) : []
      if (unknown.length)
        issues.push({
          path: at,
          message: `aki ${unknown.join(', ')} names none of this configuration's issuer trust anchors (its trust lists' certificates and the tenant's key chains): no credential under it could verify`,
        })
    })
  })
  return issues
}

/**
 * OpenID4VP 1.0 §5.9.3: with `openid_federation` the wallet ignores `client_metadata` and takes the
 * verifier's metadata from its trust chain, so the per-request encryption key of `direct_post.jwt`
 * would never reach it: refused rather than answered in the clear or not at all.
 */
function federationPrefixIssues(config: PresentationConfigData, prefix: string): ValidationIssue[] {
  if (config.clientIdPrefix !== 'openid_federation' || config.responseMode !== 'direct_post.jwt') return []
  return [
    {
      path: `${prefix}.responseMode`,
      message:
        'openid_federation requests carry no client_metadata a wallet reads (OpenID4VP 1.0 §5.9.3), so no response encryption key: use direct_post',
    },
  ]
}

/**
 * OpenID4VP 1.0 §5.9.3, §12 (checklist V-07, V-08): a Verifier Attestation only with the
 * `verifier_attestation` prefix, which needs one whose `sub` is the tenant's verifier identifier and
 * whose `cnf.jwk` is the key chain's key. `redirect_uri` requests are never signed, so a setting
 * that exists only to sign them is refused rather than ignored.
 */
async function verifierAttestationFieldIssues(
  db: Database,
  tenantId: string,
  config: PresentationConfigData,
  prefix: string,
  options: { tx?: Executor; verifier: { publicUrl: string; now: () => Date } },
): Promise<ValidationIssue[]> {
  const path = `${prefix}.verifierAttestation`
  if (config.clientIdPrefix !== 'verifier_attestation') {
    if (config.verifierAttestation === undefined) return []
    const message =
      config.clientIdPrefix === 'redirect_uri'
        ? 'redirect_uri requests cannot be signed (OpenID4VP 1.0 §5.9.3): a verifier attestation is only for clientIdPrefix verifier_attestation'
        : 'a verifier attestation is only for clientIdPrefix verifier_attestation'
    return [{ path, message }]
  }
  const chain = await createKeyChainRepository(db, tenantId).get(config.keyChainId, options.tx ?? db)
  if (!chain) return []
  const problems = await verifierAttestationIssues(config.verifierAttestation, {
    sub: `${options.verifier.publicUrl}/verifiers/${tenantId}`,
    publicJwk: chain.activePublicJwk,
    now: options.verifier.now(),
  })
  return problems.map((message) => ({ path, message }))
}

/**
 * A login mapping against its provider: an OpenID provider's claims have names; a presentation's
 * paths must be asked for by its configuration's DCQL query and fit the fields (presentedClaimIssues).
 */
async function loginClaimIssues(
  db: Database,
  tenantId: string,
  config: Pick<CredentialConfig, 'fields' | 'userAuthentication' | 'id'>,
  provider: { kind: string; presentationConfigId: string | null },
  prefix: string,
  tx: Executor,
): Promise<ValidationIssue[]> {
  const mapping = config.userAuthentication?.claims ?? {}
  if (provider.kind !== 'presentation')
    return Object.entries(mapping)
      .filter(([, source]) => typeof source !== 'string')
      .map(([key]) => ({
        path: `${prefix}.userAuthentication.claims.${key}`,
        message: 'an OpenID login provider names its claims by name: a string',
      }))
  const presentation = provider.presentationConfigId
    ? await createPresentationConfigRepository(db, tenantId).get(provider.presentationConfigId, tx)
    : undefined
  if (!presentation) return []
  const known = await knownCredentialTypes(db, tenantId, tx)
  return presentedClaimIssues(mapping, config.fields, presentation, known, prefix)
}

/**
 * A login provider's references: a `presentation` one names a presentation configuration of the
 * tenant; every credential configuration logging in with it must still map claims it can fill.
 */
export async function loginProviderIssues(
  db: Database,
  tenantId: string,
  input: LoginProviderData,
  prefix: string,
  tx: Executor = db,
  replacedCredentialIds: ReadonlySet<string> = new Set(),
): Promise<ValidationIssue[]> {
  const issues: ValidationIssue[] = []
  if (input.presentationConfigId !== undefined) {
    const found = await createPresentationConfigRepository(db, tenantId).get(input.presentationConfigId, tx)
    if (!found) {
      issues.push({
        path: `${prefix}.presentationConfigId`,
        message: `no presentation configuration '${input.presentationConfigId}' in this tenant`,
      })
      return issues
    }
  }
  const provider = { kind: input.kind, presentationConfigId: input.presentationConfigId ?? null }
  for (const config of await createCredentialConfigRepository(db, tenantId).all(tx)) {
    if (config.userAuthentication?.loginProviderId !== input.id || replacedCredentialIds.has(config.id))
      continue
    const found = await loginClaimIssues(db, tenantId, config, provider, `credential '${config.id}'`, tx)
    issues.push(
      ...found.map((issue) => ({
        ...issue,
        path: `${prefix}.kind`,
        message: `${issue.path}: ${issue.message}`,
      })),
    )
  }
  return issues
}
