import {
  findRemovedCredentialFields,
  formatMemberIssues,
  zAttributeProvider,
  zAttributeProviderInput,
  zAttributeProviderWithSecret,
  zAuthServer,
  zAuthServerInput,
  zClaimsJsonSchema,
  zConfigId,
  zCredentialConfig,
  zCredentialConfigInput,
  zLoginProvider,
  zLoginProviderInput,
  zPresentationConfig,
  zPresentationConfigInput,
  zTrustList,
  zTrustListInput,
  zWalletProvider,
  zWalletProviderInput,
  zWebhookEndpoint,
  zWebhookEndpointInput,
  zWebhookEndpointWithSecret,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { createAuthServerService } from '../services/auth-server-service'
import {
  type ConfigServiceDeps,
  createAttributeProviderService,
  createCredentialConfigService,
  createLoginProviderService,
  createPresentationConfigService,
  createWalletProviderService,
  createWebhookEndpointService,
} from '../services/config-service'
import { createTrustListService } from '../services/trust-list-service'
import { configCollectionRoutes } from './config-collection'

const LOGIN_PROVIDERS = [
  'What logs holders in for credential configurations with `userAuthentication` (authorization code flow, OpenID4VCI §5). Kind `openid`: an upstream OpenID provider; register `{PUBLIC_URL}/issuers/{tenantId}/authorize/callback` as a redirect URI of `clientId` at the provider. Kind `presentation` (presentation during issuance): the holder presents a credential, e.g. a PID, as the presentation configuration `presentationConfigId` asks, and `userAuthentication.claims` maps its claims paths to the fields; in a browser `/authorize` shows the request as a QR code and a same-device link, and wallets using Interactive Authorization (OpenID4VCI 1.1) present at `/authorize-challenge` (the current draft) or `/interactive-authorization` (the earlier form deployed wallets speak).',
  '`issuer` follows the outbound policy (https, no internal address unless `OUTBOUND_ALLOW_HTTP` / `OUTBOUND_ALLOWED_HOSTS`; else 422 `body.issuer`). At each login the issuer fetches its discovery document, token endpoint, JWKS and userinfo.',
  '`clientSecret` (client_secret_basic) is stored encrypted and never returned; `hasClientSecret` tells whether one is stored. On replace, leave it out to keep the stored secret, which is allowed only while `issuer` and `clientId` stay the same (else 422 `body.clientSecret`: the secret is never sent to another provider); send `null` to remove it (a public client).',
].join('\n\n')

const AUTH_SERVERS = [
  "External OAuth authorization servers whose access tokens the tenant's credential endpoint accepts (OpenID4VCI 1.0 §12.2.4): the credential issuer metadata lists them in `authorization_servers` after the issuer itself, and an offer names one in its `authorization_code` grant with `authorizationServerId` (`authorization_server`, sent only while more than one is listed). See docs/authorization-code-flow.md#external-authorization-servers.",
  "A token is accepted when its `iss` is the server's, its `aud` names the credential issuer identifier `{PUBLIC_URL}/issuers/{tenantId}`, it is unexpired, and, when it carries `cnf.jkt`, it comes as `Authorization: DPoP` with a proof of that key (RFC 9449). It authorises the configurations it names (`mapping`) that are in `credentialConfigurationIds`. A token carrying `issuer_state` (the offer's, which the wallet sent to the server) redeems that offer: the offer's prepared claims are issued, once.",
  '`issuer` follows the outbound policy (https, no internal address unless `OUTBOUND_ALLOW_HTTP` / `OUTBOUND_ALLOWED_HOSTS`; else 422 `body.issuer`). `clientSecret` is stored encrypted and never returned; `hasClientSecret` tells whether one is stored.',
].join('\n\n')

const WALLET_PROVIDERS = [
  "Wallet providers whose wallet attestations (`attest_jwt_client_auth`, HAIP §4.4.1) and key attestations (OpenID4VCI Appendix D) the tenant's issuer trusts: an attestation is trusted when its `x5c` chains to a current certificate of a trust list named in `trustListIds` (the anchor itself must not be in the `x5c`).",
  '`trustListIds` names trust lists (`/api/trust-lists`) of the tenant: an unknown id is a 422 naming `body.trustListIds.<index>`, and a named list cannot be deleted (409). A list past NextUpdate + grace, or not fetched yet, contributes no certificates (fail closed), and the refusal of an attestation says so. A provider with neither `trustListIds` nor `trustAnchors` is a 422 naming `body.trustListIds`.',
  'Deprecated: `trustAnchors` (PEM X.509 certificates, up to 20; one that does not parse is a 422 naming `body.trustAnchors.<index>`) is converted at save, in the same transaction, into the `pem` trust list `anchors-<12 hex of SHA-256 of the trimmed, sorted PEMs>` (created once per set in the tenant, an ordinary list) and its id added to `trustListIds`. Responses carry no `trustAnchors`.',
  'Deleting a wallet provider is never refused: its attestations stop being trusted, so configurations with `walletAttestation: "required"` or `keyAttestation.required` refuse its wallets.',
].join('\n\n')

const TRUST_LISTS = [
  'Certificates that credential issuers may chain to, named by presentation configurations in `trustListIds` (besides the tenant’s own key chains), and that wallet and key attestations may chain to, named by wallet providers in `trustListIds`. The deprecated `trustAnchors` of both are saved as `pem` lists `anchors-<hash>`, which are ordinary lists here. See docs/trust-lists.md.',
  '`source.type: "pem"`: the certificates given. `source.type: "etsi-tl"`: an ETSI TS 119 612 trusted list (XML) at `url`, fetched under the outbound policy by a background job every `refreshSeconds` (one fetch per list and interval across all processes; the first soon after saving). Its enveloped XML signature must verify with one of `signerCertificates`, and the certificates of its services whose `ServiceTypeIdentifier` is in `serviceTypes` (all when absent) and whose status is granted are used. A failed fetch keeps the last good content and sets `status.lastError`. `source.type: "lote"` is the same for an ETSI TS 119 602 List of Trusted Entities (JSON signed as a compact JWS). `source.type: "etsi-lotl"`: an ETSI TS 119 612 list of trusted lists (e.g. the EU LOTL) signed by one of `signerCertificates`; each XML list it points to (of `territories` when given) is fetched too and checked with the certificates its pointer names, and any that fails fails the whole refresh. TS 119 612 lists and lists of lists must carry XAdES signed properties naming the signer certificate. `source.type: "openid-federation"`: an OpenID Federation 1.0 trust anchor (`trustAnchor`, its `jwks`, optional `requiredTrustMarkTypes`), holding no certificates and never fetched by the job: SD-JWT VC and jwt_vc_json issuers without x5c, by their `iss` (presentation configurations) and wallet attesters without x5c (wallet providers) are trusted when their trust chain resolves to it, with the metadata policies applied and the required trust marks valid.',
  'Fail closed: once the time is past the held list’s NextUpdate plus `graceSeconds` without a good fetch, the list contributes no certificates (`status.state: "expired"`) and the verifier’s failure reason names it.',
].join('\n\n')

/** Answer header of a create that named no key chain: the tenant default key chain it got. */
export const DEFAULT_KEY_CHAIN_HEADER = 'x-default-key-chain'

const CREDENTIALS = [
  '`keyChainId` may be left out (the spec\'s minimal body is `id`, `config`, `fields`). A create then uses the tenant\'s default signing key chain (`defaultKeyChainId` of `GET /api/tenants/{tenantId}`, set with `PATCH /api/tenants/{tenantId}`) and names it in the `X-Default-Key-Chain` answer header; the stored configuration shows it as `keyChainId`. A tenant without one gets it on first need: key chain `default`, made like `POST /api/key-chains` `{"source": "generate"}` (ES256, leaf certificate issued by a root of its own). Concurrent creates make one default. A replace without `keyChainId` keeps the configuration\'s key chain.',
  "`mso_mdoc` needs a key chain whose certificates name a country (ISO 18013-5 Annex B.1). The default key chain made on first need names the tenant's `country` (`PATCH /api/tenants/{tenantId}`); a tenant that states none, or a default made without one, gets a 422 naming `body.keyChainId` and the fix (nothing is created): set the country first, or name a key chain made with `certificate.country`.",
].join('\n\n')

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
          deleteSummary: 'Delete a credential configuration',
          roles: { read: ['issuance:config'], write: ['issuance:config'] },
          input: zCredentialConfigInput,
          output: zCredentialConfig,
          saved: zCredentialConfig,
          rawBodyIssues: (body) => findRemovedCredentialFields(body),
          // The format's type member (vct, docType) stays a 422 with its rule's message.
          rawBodyRuleIssues: (body) => formatMemberIssues(body),
          description: CREDENTIALS,
          service: (tenantId, req) => createCredentialConfigService(deps, tenantId, req.principal),
          createdHeaders: (input, saved): Record<string, string> =>
            input.keyChainId === undefined ? { [DEFAULT_KEY_CHAIN_HEADER]: saved.keyChainId } : {},
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
          deleteSummary: 'Delete a presentation configuration',
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
          deleteSummary:
            'Delete an attribute provider; refused (409) while a credential configuration names it',
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
          deleteSummary:
            'Delete a login provider; refused (409) while a credential configuration names it in `userAuthentication`',
          description: LOGIN_PROVIDERS,
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
          collection: 'auth-servers',
          itemKey: 'authServerId',
          name: 'AuthServer',
          label: 'authorization server',
          tag: 'auth-servers',
          deleteSummary:
            'Delete an external authorization server; its tokens are refused at once (sessions it started keep their state)',
          description: AUTH_SERVERS,
          roles: { read: ['issuance:config'], write: ['issuance:config'] },
          input: zAuthServerInput,
          output: zAuthServer,
          saved: zAuthServer,
          service: (tenantId, req) => createAuthServerService(deps, tenantId, req.principal),
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
          deleteSummary:
            'Delete a wallet provider; never refused: its attestations stop being trusted at once',
          description: WALLET_PROVIDERS,
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
          collection: 'trust-lists',
          itemKey: 'trustListId',
          name: 'TrustList',
          label: 'trust list',
          tag: 'trust-lists',
          deleteSummary:
            'Delete a trust list; refused (409) while a presentation configuration or a wallet provider names it in `trustListIds`',
          description: TRUST_LISTS,
          roles: {
            read: ['presentation:config', 'issuance:config'],
            write: ['presentation:config', 'issuance:config'],
          },
          input: zTrustListInput,
          output: zTrustList,
          saved: zTrustList,
          service: (tenantId, req) => createTrustListService(deps, tenantId, req.principal),
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
          deleteSummary:
            'Delete a webhook endpoint; refused (409) while a credential or presentation configuration names it',
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
