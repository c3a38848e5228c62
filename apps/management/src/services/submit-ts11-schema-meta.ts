import { RuleViolationError, type SignedTs11SchemaMeta, UpstreamError } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'
import { createRegistrarRepository } from '@credential-service/db-schema'
import type { OutboundPolicy } from '@credential-service/server-kit'
import { registrarClientFor } from './registrar-service'
import { prepareTs11SchemaMeta, signPreparedTs11, type Ts11Deps, type Ts11SignBody } from './ts11-schema-meta'

export interface Ts11SubmissionDeps extends Ts11Deps {
  cipher: JwkCipher
  outbound: OutboundPolicy
}

/**
 * Signs TS11 schema metadata and submits it to the tenant's registrar (docs/registrar.md, the
 * peer product's flow): unless `config.id` names the attestation, an id is reserved at the
 * registrar and signed into the document; the JWS is then submitted with the reservation's token.
 * The document is checked and its key chain resolved before the registrar is called, so a body
 * that cannot be signed reserves nothing. Nothing is stored here.
 */
export async function submitTs11SchemaMeta(
  deps: Ts11SubmissionDeps,
  tenantId: string,
  body: Ts11SignBody,
): Promise<SignedTs11SchemaMeta> {
  const prepared = await prepareTs11SchemaMeta(deps, tenantId, body)
  const connection = await createRegistrarRepository(deps.db, tenantId).get()
  if (!connection) {
    const message =
      'the tenant has no registrar connection: PUT /api/registrar first, or leave submitToRegistrar out'
    throw new RuleViolationError(message, [{ path: 'body.submitToRegistrar', message }])
  }
  const registrar = registrarClientFor(deps, tenantId, connection)
  const reservation =
    prepared.document.id === undefined ? await registrar.reserveSchemaMetadataId() : undefined
  const id = prepared.document.id ?? (reservation?.reservedId as string)

  // After a reservation a failure leaves it unused: say so instead of only naming the step.
  const unconfirmed = (error: unknown, what: string): never => {
    if (!(error instanceof UpstreamError)) throw error
    const reserved = reservation ? `; the id '${id}' reserved for it stays unused` : ''
    throw new UpstreamError(`${error.detail}: ${what}${reserved}`, { cause: error })
  }
  const signed = await signPreparedTs11(deps, prepared, id).catch((error: unknown) =>
    unconfirmed(error, 'the document was not signed, nothing was submitted'),
  )
  const entry = await registrar
    .submitSchemaMetadata(signed.jws, reservation?.reservationToken)
    .catch((error: unknown) =>
      unconfirmed(error, 'the document was signed but the registrar did not confirm the submission'),
    )
  return { ...signed, registrar: { id, reserved: reservation !== undefined, entryId: entry.id } }
}
