import { createPublicKey, X509Certificate } from 'node:crypto'
import {
  type AccessCertificate,
  type AccessCertificateRequest,
  ConflictError,
  checkOutboundUrl,
  NotFoundError,
  type Principal,
  type RegistrarConfig,
  type RegistrarConfigInput,
  type RegistrationCertificate,
  type RegistrationCertificateRequest,
  type RelyingPartyRegistration,
  RuleViolationError,
  UpstreamError,
} from '@credential-service/core-domain'
import { canonicalHash, type JwkCipher, parseCertificateChain } from '@credential-service/crypto'
import {
  type AuditEntry,
  createKeyChainRepository,
  createPresentationConfigRepository,
  createRegistrarRepository,
  createTenantRepository,
  type Database,
  type Executor,
  type RegistrarConfigRow,
  recordAudit,
  tenantChanged,
  toRegistrarConfig,
  toRegistrationCertificate,
} from '@credential-service/db-schema'
import type { OutboundPolicy } from '@credential-service/server-kit'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { createRegistrarClient } from './registrar-client'

export interface RegistrarServiceDeps {
  db: Database
  cipher: JwkCipher
  outbound: OutboundPolicy
  /** Host of PUBLIC_URL: the SAN asked for when a key chain names none. */
  publicHost: string
  now: () => Date
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

/** The registrar's chain without a trailing self-signed root: HAIP keeps trust anchors out of `x5c`. */
function withoutRoot(pems: string[]): string[] {
  if (pems.length < 2) return pems
  const last = new X509Certificate(pems.at(-1) as string)
  return last.checkIssued(last) && last.verify(last.publicKey) ? pems.slice(0, -1) : pems
}

/** The stored client secret is encrypted for its tenant's registrar connection only. */
const secretContextOf = (tenantId: string) => `registrar:${tenantId}`

/** A client for a tenant's stored registrar connection, its client secret decrypted. */
export function registrarClientFor(
  deps: Pick<RegistrarServiceDeps, 'cipher' | 'outbound'>,
  tenantId: string,
  row: RegistrarConfigRow,
) {
  return createRegistrarClient(
    {
      baseUrl: row.baseUrl,
      tokenUrl: row.tokenUrl,
      clientId: row.clientId,
      clientSecret: deps.cipher.decrypt<string>(row.clientSecret, secretContextOf(tenantId)),
    },
    deps.outbound,
  )
}

/**
 * The tenant's registrar integration (docs/registrar.md): its connection settings, its
 * registration as relying party / issuer, access certificates for its key chains, and
 * registration certificates for its presentation configurations. Registrar calls happen before
 * any write, so a failing registrar leaves nothing behind.
 */
export function createRegistrarService(deps: RegistrarServiceDeps, tenantId: string, actor: Principal) {
  const repo = createRegistrarRepository(deps.db, tenantId)
  const secretContext = secretContextOf(tenantId)
  const audit = (
    tx: Executor,
    action: AuditEntry['action'],
    resourceType: AuditEntry['resourceType'],
    resourceId: string,
    detail?: Record<string, unknown>,
  ) =>
    recordAudit(tx, {
      tenantId,
      actorClientId: actor.clientId,
      action,
      resourceType,
      resourceId,
      ...(detail ? { detail } : {}),
    })

  async function requireTenant(): Promise<void> {
    if (!(await createTenantRepository(deps.db).get(tenantId))) throw new NotFoundError('tenant', tenantId)
  }

  async function config(): Promise<RegistrarConfigRow> {
    await requireTenant()
    const row = await repo.get()
    if (!row) throw new NotFoundError('registrar configuration')
    return row
  }

  /** The configuration of a registered tenant, and a client speaking the registrar's protocol. */
  async function registered() {
    const row = await config()
    if (!row.relyingPartyId) {
      throw new RuleViolationError(
        'the tenant is not registered at the registrar yet; POST /api/registrar/relying-party first',
      )
    }
    return { row, rpId: row.relyingPartyId, client: clientOf(row) }
  }

  const clientOf = (row: RegistrarConfigRow) => registrarClientFor(deps, tenantId, row)

  return {
    get: async (): Promise<RegistrarConfig> => toRegistrarConfig(await config()),

    async put(input: RegistrarConfigInput): Promise<RegistrarConfig> {
      await requireTenant()
      const issues = [
        ...checkOutboundUrl(input.baseUrl, deps.outbound, 'body.baseUrl'),
        ...checkOutboundUrl(input.tokenUrl, deps.outbound, 'body.tokenUrl'),
      ]
      if (issues.length)
        throw new RuleViolationError('the registrar URLs are not allowed; see errors', issues)
      return deps.db.transaction(async (tx) => {
        const existing = await repo.get(tx)
        if (!existing && input.clientSecret === undefined) {
          const message = 'required when the tenant has no registrar configuration yet'
          throw new RuleViolationError(message, [{ path: 'body.clientSecret', message }])
        }
        // A registration belongs to one registrar: another base URL starts unregistered.
        const keepRegistration = existing !== undefined && existing.baseUrl === input.baseUrl
        const saved = await repo.put(
          {
            baseUrl: input.baseUrl,
            tokenUrl: input.tokenUrl,
            clientId: input.clientId,
            clientSecret:
              input.clientSecret === undefined
                ? (existing?.clientSecret as string)
                : deps.cipher.encrypt(input.clientSecret, secretContext),
            relyingPartyId: keepRegistration ? existing.relyingPartyId : null,
            relyingPartyName: keepRegistration ? existing.relyingPartyName : null,
            relyingPartyRoles: keepRegistration ? existing.relyingPartyRoles : null,
            registeredAt: keepRegistration ? existing.registeredAt : null,
          },
          tx,
        )
        await audit(tx, existing ? 'update' : 'create', 'registrar-config', tenantId, {
          fields: Object.keys(input),
        })
        return toRegistrarConfig(saved)
      })
    },

    async delete(): Promise<void> {
      await requireTenant()
      await deps.db.transaction(async (tx) => {
        if (!(await repo.delete(tx))) throw new NotFoundError('registrar configuration')
        await audit(tx, 'delete', 'registrar-config', tenantId)
      })
    },

    async registerRelyingParty(input: RelyingPartyRegistration): Promise<RegistrarConfig> {
      const row = await config()
      if (row.relyingPartyId)
        throw new ConflictError(
          `the tenant is already registered at the registrar as '${row.relyingPartyId}'`,
        )
      const registered = await clientOf(row).registerRelyingParty({
        name: input.name,
        roles: input.roles,
        identifiers: input.identifiers ?? {},
      })
      return deps.db.transaction(async (tx) => {
        const saved = await repo.update(
          {
            relyingPartyId: registered.id,
            relyingPartyName: input.name,
            relyingPartyRoles: input.roles,
            registeredAt: deps.now(),
          },
          tx,
        )
        // Deleted while the registrar answered: nothing to attach the registration to.
        if (!saved) throw new NotFoundError('registrar configuration')
        await audit(tx, 'update', 'registrar-config', tenantId, { fields: ['relyingParty'] })
        return toRegistrarConfig(saved)
      })
    },

    async requestAccessCertificate(input: AccessCertificateRequest): Promise<AccessCertificate> {
      const { rpId, client } = await registered()
      const keyChains = createKeyChainRepository(deps.db, tenantId)
      const chain = await keyChains.get(input.keyChainId)
      if (!chain) {
        const message = `no key chain '${input.keyChainId}' in this tenant`
        throw new RuleViolationError(message, [{ path: 'body.keyChainId', message }])
      }
      const publicKey = createPublicKey({ key: chain.activePublicJwk, format: 'jwk' })
        .export({ type: 'spki', format: 'pem' })
        .toString()
      const dns = input.dnsNames ?? (chain.dnsNames.length ? chain.dnsNames : [deps.publicHost])
      const issued = await client.requestAccessCertificate({ rpId, publicKey, dns })
      const name = 'access certificate request'
      const pems = issued.crt.match(PEM_CERTIFICATE) ?? []
      let certificates: string[]
      try {
        certificates = withoutRoot((await parseCertificateChain(pems, chain.activePublicJwk, deps.now())).pem)
      } catch (error) {
        throw new UpstreamError(
          `${name}: the registrar's certificate is unusable for key chain '${chain.id}': ${(error as Error).message}`,
          { cause: error },
        )
      }
      try {
        return await deps.db.transaction(async (tx) => {
          const locked = await keyChains.lock(chain.id, tx)
          if (!locked) throw new NotFoundError('key chain', chain.id)
          if (locked.activeKid !== chain.activeKid)
            throw new ConflictError(
              `key chain '${chain.id}' was rotated meanwhile; request a new certificate`,
            )
          await keyChains.update(
            chain.id,
            { activeCertificates: certificates, certificateMode: 'registrar' },
            tx,
          )
          await audit(tx, 'update', 'key-chain', chain.id, {
            fields: ['certificateChain'],
            registrarCertificateId: issued.id,
          })
          return { keyChainId: chain.id, registrarCertificateId: issued.id, certificateChain: certificates }
        })
      } finally {
        // Signers cache the chain per process: drop this process's copy at once.
        tenantChanged(tenantId)
      }
    },

    async requestRegistrationCertificate(
      input: RegistrationCertificateRequest,
    ): Promise<RegistrationCertificate> {
      const { rpId, client } = await registered()
      const presentation = await createPresentationConfigRepository(deps.db, tenantId).get(
        input.presentationConfigId,
      )
      if (!presentation) {
        const message = `no presentation configuration '${input.presentationConfigId}'`
        throw new RuleViolationError(message, [{ path: 'body.presentationConfigId', message }])
      }
      const issued = await client.requestRegistrationCertificate({
        rpId,
        privacy_policy: input.privacyPolicyUri,
        support_uri: input.supportUri,
        purpose: input.purpose,
        // What the configuration asks wallets for: format, type metadata and claim paths.
        credentials: presentation.dcqlQuery.credentials.map((credential) => ({
          format: credential.format,
          meta: (credential.meta ?? {}) as Record<string, unknown>,
          ...(credential.claims ? { claims: credential.claims.map((claim) => ({ path: claim.path })) } : {}),
        })),
      })
      const expiresAt = registrationExpiry(issued.jwt, deps.now())
      return deps.db.transaction(async (tx) => {
        const saved = await repo.putRegistrationCertificate(
          {
            presentationConfigId: presentation.id,
            registrarCertificateId: issued.id,
            jwt: issued.jwt,
            dcqlHash: canonicalHash(presentation.dcqlQuery),
            expiresAt,
          },
          tx,
        )
        await audit(tx, 'update', 'registration-certificate', presentation.id, {
          registrarCertificateId: issued.id,
        })
        return toRegistrationCertificate(saved)
      })
    },
  }
}

/** A registration certificate must be a JWS compact JWT that has not expired; answers its `exp`. */
function registrationExpiry(jwt: string, now: Date): Date | null {
  const name = 'registration certificate request'
  let exp: number | undefined
  try {
    decodeProtectedHeader(jwt)
    exp = decodeJwt(jwt).exp
  } catch (error) {
    throw new UpstreamError(`${name}: the registrar's certificate is not a JWT`, { cause: error })
  }
  if (exp === undefined) return null
  if (exp * 1000 <= now.getTime()) throw new UpstreamError(`${name}: the registrar's certificate has expired`)
  return new Date(exp * 1000)
}
