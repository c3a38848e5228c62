import { optionalEnv, parseEnv, perMinute, zCommonEnv } from '@credential-service/server-kit'
import { z } from 'zod'

const CLAIM_PATH = /^[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*$/

/** Base URL and realm of a Keycloak issuer `<base>/realms/<realm>`; undefined for other issuers. */
export function keycloakRealm(issuer: string): { baseUrl: string; realm: string } | undefined {
  const match = /^(https?:\/\/.+?)\/realms\/([^/?#]+)\/?$/.exec(issuer)
  if (!match?.[1] || !match[2]) return undefined
  return { baseUrl: match[1], realm: decodeURIComponent(match[2]) }
}

export const zManagementEnv = zCommonEnv
  .extend({
    AUTH_CLIENT_ID: optionalEnv(z.string().min(3)).describe(
      'Root (operator) client id, created or updated at start (in OIDC mode: in the identity provider). Required unless OIDC is set',
    ),
    AUTH_CLIENT_SECRET: optionalEnv(z.string().min(16)).describe(
      'Root client secret (≥ 16 characters). Required unless OIDC is set',
    ),
    ACCESS_TOKEN_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(86_400)
      .default(3600)
      .describe('Lifetime of management access tokens from /api/oauth2/token'),
    RATE_LIMIT_TOKEN_PER_MINUTE: perMinute(10).describe(
      'Failed client authentications per minute at /api/oauth2/token, counted per client id and per client IP; further attempts answer 429 until the minute ends; 0 turns the limit off',
    ),
    KEY_ROTATION_CHECK_SECONDS: z.coerce
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(300)
      .describe(
        'How often the management process rotates key chains whose policy is due; 0 turns the job off',
      ),
    SESSION_RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(0)
      .max(3650)
      .default(30)
      .describe(
        'Days an issuance or presentation session (with its claims and result) is kept after its expiry; 0 keeps sessions forever',
      ),
    SESSION_EVENTS_HEARTBEAT_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(300)
      .default(15)
      .describe(
        'Live session streams (GET /api/sessions/{id}/events): seconds between keep-alive comments, at each of which the session is also read again (a change whose NOTIFY was lost shows by then)',
      ),
    CONSOLE_DIR: z
      .string()
      .min(1)
      .default('apps/console/dist')
      .describe(
        'Folder of the admin console’s static build, served under /console (relative to the working directory; the image sets /app/console)',
      ),
    CONSOLE_SESSION_IDLE_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(86_400)
      .default(1800)
      .describe(
        'Admin console (client credentials sign-in): a session unused this many seconds ends; every process of the service reads it on the database clock',
      ),
    CONSOLE_SESSION_MAX_SECONDS: z.coerce
      .number()
      .int()
      .min(300)
      .max(604_800)
      .default(43_200)
      .describe('Admin console: a session ends this many seconds after sign-in, however much it is used'),
    CONFIG_IMPORT_DIR: optionalEnv(z.string().min(1)).describe(
      'Folder imported at start-up: <dir>/<tenant>/tenant.json and <dir>/<tenant>/{key-chains,attribute-providers,webhook-endpoints,trust-lists,wallet-providers,presentations,login-providers,credentials,auth-servers,clients}/*.json, applied in that order; see docs/configuration-import.md',
    ),
    OIDC: optionalEnv(z.url()).describe(
      'Issuer URL of an external OpenID Connect provider (a Keycloak realm, <base>/realms/<realm>); switches to external OIDC mode, see docs/oidc-mode.md',
    ),
    OIDC_INTERNAL_ISSUER_URL: optionalEnv(z.url()).describe(
      'OIDC mode: issuer URL as reachable from inside the deployment, if it differs from OIDC; discovery, keys and the admin API are fetched there, tokens still carry OIDC as iss',
    ),
    OIDC_CLIENT_ID: optionalEnv(z.string().min(1)).describe(
      'OIDC mode: admin client used to manage clients and roles (client credentials; its service account needs realm-management manage-clients)',
    ),
    OIDC_CLIENT_SECRET: optionalEnv(z.string().min(1)).describe('OIDC mode: secret of OIDC_CLIENT_ID'),
    OIDC_AUDIENCE: optionalEnv(z.string().min(1)).describe(
      'OIDC mode: `aud` that access tokens must carry (the service adds it to the clients it manages); default {PUBLIC_URL}/api',
    ),
    OIDC_TENANT_CLAIM: z
      .string()
      .regex(CLAIM_PATH, 'a claim name, or a dotted path of claim names')
      .default('tenant_id')
      .describe('OIDC mode: access token claim (dotted path for nested claims) that names the tenant'),
    OIDC_ROLES_CLAIM: z
      .string()
      .regex(CLAIM_PATH, 'a claim name, or a dotted path of claim names')
      .default('roles')
      .describe(
        'OIDC mode: access token claim holding the roles, an array (dotted path for nested claims, e.g. realm_access.roles); values other than the spec roles are ignored',
      ),
    CONSOLE_OIDC_CLIENT_ID: optionalEnv(z.string().min(1)).describe(
      'OIDC mode: public client (no secret) the admin console signs in with at the provider, authorization code + PKCE S256, redirect URI {PUBLIC_URL}/console/. Tokens of its users act on the tenant OIDC_TENANT_CLAIM names (a user attribute), while that tenant exists and if issued after it was created; unset: the console signs in with client credentials. See docs/console.md',
    ),
  })
  .superRefine(
    (env, ctx) => {
      const missing = (name: keyof typeof env, why: string) =>
        ctx.addIssue({ code: 'custom', path: [name], message: `${name} is required ${why}` })
      const isSet = (value: unknown) => value !== undefined && value !== ''
      if (!isSet(env.OIDC)) {
        if (isSet(env.CONSOLE_OIDC_CLIENT_ID))
          ctx.addIssue({
            code: 'custom',
            path: ['CONSOLE_OIDC_CLIENT_ID'],
            message: 'CONSOLE_OIDC_CLIENT_ID needs OIDC (the console signs in at the external provider)',
          })
        // Spec §5.3: the built-in token server needs all of these.
        if (env.AUTH_CLIENT_ID === undefined)
          missing('AUTH_CLIENT_ID', 'when OIDC is unset (built-in token server)')
        if (env.AUTH_CLIENT_SECRET === undefined)
          missing('AUTH_CLIENT_SECRET', 'when OIDC is unset (built-in token server)')
      } else {
        // Spec §5.4: external OIDC mode.
        if (!isSet(env.OIDC_CLIENT_ID)) missing('OIDC_CLIENT_ID', 'when OIDC is set')
        if (!isSet(env.OIDC_CLIENT_SECRET)) missing('OIDC_CLIENT_SECRET', 'when OIDC is set')
        const adminIssuer = env.OIDC_INTERNAL_ISSUER_URL ?? env.OIDC
        if (adminIssuer && !keycloakRealm(adminIssuer)) {
          ctx.addIssue({
            code: 'custom',
            path: [env.OIDC_INTERNAL_ISSUER_URL ? 'OIDC_INTERNAL_ISSUER_URL' : 'OIDC'],
            message:
              'must be a Keycloak realm issuer (<base>/realms/<realm>): clients are managed through the Keycloak admin API',
          })
        }
        if (isSet(env.AUTH_CLIENT_ID) !== isSet(env.AUTH_CLIENT_SECRET)) {
          ctx.addIssue({
            code: 'custom',
            path: ['AUTH_CLIENT_SECRET'],
            message: 'AUTH_CLIENT_ID and AUTH_CLIENT_SECRET are set together or not at all in OIDC mode',
          })
        }
        // The console's client binds users' tokens to the tenant they name (checklist S-108 keyed
        // on the tenant): it must not be a confidential client of the service's own.
        const consoleClient = env.CONSOLE_OIDC_CLIENT_ID
        if (
          isSet(consoleClient) &&
          (consoleClient === env.OIDC_CLIENT_ID || consoleClient === env.AUTH_CLIENT_ID)
        ) {
          ctx.addIssue({
            code: 'custom',
            path: ['CONSOLE_OIDC_CLIENT_ID'],
            message:
              'CONSOLE_OIDC_CLIENT_ID must be a public client of its own, not OIDC_CLIENT_ID or AUTH_CLIENT_ID',
          })
        }
      }
    },
    // Run even when other variables failed, so one start-up lists every problem at once.
    { when: () => true },
  )

export type ManagementConfig = Readonly<z.output<typeof zManagementEnv>>

export function parseManagementConfig(env: Record<string, string | undefined>): ManagementConfig {
  return parseEnv(zManagementEnv, env)
}
