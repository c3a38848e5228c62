import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { IssuanceDeps } from '../services/issuance'
import type { ServerNonces } from '../services/server-nonces'

/**
 * Fastify's own body validation of the wallet-facing POSTs: any object (form or JSON). Each
 * message's schema (core-domain/protocol) parses it in the handler, where its failures take the
 * protocol's error code and the endpoint's order of checks; Fastify's would answer its own way.
 */
export const anyBody = z.record(z.string(), z.unknown())

/** The `:tenant` path parameter of every issuer route. */
export const tenantParams = z.object({ tenant: zTenantId })

/**
 * An unknown tenant is a 404 (like its metadata) before anything is recorded under it: c_nonces and
 * the jtis of DPoP proofs and attestation PoPs are rows with the tenant as foreign key.
 */
export async function requireTenant(deps: IssuanceDeps, tenant: string): Promise<void> {
  if (!(await deps.tenants.tenant(tenant))) throw new NotFoundError('issuer', tenant)
}

/** A fresh server nonce of the URL's tenant in `header` on every answer, refusals included. */
function serverNonceHeader(header: string, nonces: ServerNonces) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const tenant = (req.params as { tenant?: string }).tenant
    if (tenant) reply.header(header, nonces.issue(tenant))
  }
}
const noHeader = async () => {}

/** RFC 9449 §8, §9: a fresh server nonce on every answer of the endpoints that take DPoP proofs. */
export const dpopNonceHeader = (deps: IssuanceDeps) =>
  deps.dpop.nonceRequired ? serverNonceHeader('dpop-nonce', deps.dpop.nonces) : noHeader

/** ABCA (-10) §8: the next PoP challenge on every answer of the endpoints that take a wallet attestation (token, PAR). */
export const attestationChallengeHeader = (deps: IssuanceDeps) =>
  serverNonceHeader('oauth-client-attestation-challenge', deps.attestationChallenges)
