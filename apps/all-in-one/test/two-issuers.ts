import { randomBytes } from 'node:crypto'
import { type ServiceProcess, startDeployment, tenantAdmin } from './processes'

/** One deployment behind one ingress: a token or a proof made for the issuer is good at either issuer process. */
const PUBLIC_URL = 'https://credentials.test'

export interface TwoIssuers {
  /** The tenant's id (`<prefix>-<hex>`) and its credential issuer identifier. */
  tenant: string
  issuerId: string
  issuers: [ServiceProcess, ServiceProcess]
  /** POSTs to the management API as the tenant's admin client: the created resource. */
  post: (path: string, body: unknown) => Promise<Record<string, unknown>>
  stop: () => Promise<void>
}

/**
 * The set-up of the suites that race two issuer processes: a management and two issuer processes
 * on the PostgreSQL database at `databaseUrl`, a new tenant whose admin client holds `roles`, its
 * generated key chain `keys` and an SD-JWT VC configuration `pid` (one disclosable `given_name`,
 * plus the `config` fields in `pidConfig`). Wallet rate limits are out of the way, and outbound
 * calls may reach plain-HTTP servers on 127.0.0.1 (webhook receivers, authorization servers).
 */
export async function startTwoIssuers(
  databaseUrl: string,
  prefix: string,
  roles: string[],
  pidConfig: Record<string, unknown> = {},
): Promise<TwoIssuers> {
  const root = { id: `root-${crypto.randomUUID()}`, secret: randomBytes(24).toString('base64url') }
  const tenant = `${prefix}-${randomBytes(4).toString('hex')}`
  const processes = await startDeployment(databaseUrl, root, ['management', 'issuer', 'issuer'], {
    PUBLIC_URL,
    RATE_LIMIT_WALLET_PER_MINUTE: '100000',
    OUTBOUND_ALLOW_HTTP: 'true',
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
  })
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()))
  }
  try {
    const [management, a, b] = processes as [ServiceProcess, ServiceProcess, ServiceProcess]
    const { post } = await tenantAdmin(management.origin, root, tenant, roles)
    await post('/key-chains', { source: 'generate', id: 'keys' })
    await post('/credentials', {
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:pid', ...pidConfig },
      keyChainId: 'keys',
      fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
    })
    return { tenant, issuerId: `${PUBLIC_URL}/issuers/${tenant}`, issuers: [a, b], post, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
