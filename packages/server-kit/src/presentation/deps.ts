import { publicPart } from '@credential-service/crypto'
import type { PresentationSessionRow } from '@credential-service/db-schema'
import type { JWK } from 'jose'
import type { ProtocolDeps } from '../protocol-app'
import type { StatusLists } from './status-list'

/** What verifying a presentation needs: a protocol app's deps and the process's status list cache. */
export interface PresentationDeps extends ProtocolDeps {
  /** The process's cache of status lists (one per verifier app). */
  statusLists: StatusLists
}

/** The public half of a request's response encryption key, as published in `client_metadata`. */
export function encryptionJwk(deps: PresentationDeps, row: PresentationSessionRow): JWK {
  const privateJwk = deps.keys.cipher.decrypt(row.encryptionKey, `presentation:${row.tenantId}/${row.id}`)
  return { ...publicPart(privateJwk), kid: row.encryptionKid, alg: 'ECDH-ES', use: 'enc' }
}
