import type { ValidationIssue } from '@credential-service/core-domain'
import { parseCertificate } from '@credential-service/crypto'
import {
  ANCHORS_TRUST_LIST_DESCRIPTION,
  ANCHORS_TRUST_LIST_GRACE_SECONDS,
  anchorsTrustListCertificates,
  anchorsTrustListId,
  createTrustListRepository,
  type Database,
  type Executor,
  recordAudit,
  type TrustListRow,
  trustListColumns,
} from '@credential-service/db-schema'

const MAX_TRUST_LIST_IDS = 20

/** PEM certificates that do not parse, each named by its index under `path`. */
export function pemIssues(pems: string[], path: string): ValidationIssue[] {
  return pems.flatMap((pem, index) => {
    try {
      if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('not PEM')
      parseCertificate(pem)
      return []
    } catch {
      return [{ path: `${path}.${index}`, message: 'not a valid PEM X.509 certificate' }]
    }
  })
}

/** What carries the deprecated shorthand: a presentation configuration or a wallet provider. */
export interface AnchorOwner {
  trustAnchors?: string[] | undefined
  trustListIds?: string[] | undefined
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((pem, i) => pem === b[i])

/**
 * Issue 25: turns `trustAnchors` into the `pem` trust list `anchors-<hash>` (as migration 0026
 * does), created in `tx` unless the tenant has it, and named in `trustListIds`. The PEMs must have
 * been checked already. A list of that id holding other certificates (edited since) is not
 * widened silently: a 422 asks to name a list instead.
 */
export async function convertTrustAnchors<T extends AnchorOwner>(
  db: Database,
  tenantId: string,
  actorClientId: string,
  owner: T,
  prefix: string,
  tx: Executor,
): Promise<{ data: Omit<T, 'trustAnchors'> & { trustListIds?: string[] }; issues: ValidationIssue[] }> {
  const { trustAnchors, ...rest } = owner
  const certificates = anchorsTrustListCertificates(trustAnchors ?? [])
  if (!certificates.length) return { data: rest, issues: [] }
  const id = anchorsTrustListId(certificates)
  const repo = createTrustListRepository(db, tenantId)
  const existing = (await repo.row(id, tx)) as TrustListRow | undefined
  if (
    existing &&
    !(
      existing.source.type === 'pem' &&
      sameSet(anchorsTrustListCertificates(existing.certificates), certificates)
    )
  )
    return {
      data: rest,
      issues: [
        {
          path: `${prefix}.trustAnchors`,
          message: `trust list '${id}' exists with other certificates; name a trust list in trustListIds instead`,
        },
      ],
    }
  const trustListIds = [...new Set([...(owner.trustListIds ?? []), id])]
  if (trustListIds.length > MAX_TRUST_LIST_IDS)
    return {
      data: rest,
      issues: [
        {
          path: `${prefix}.trustListIds`,
          message: `with the list '${id}' made of trustAnchors, more than ${MAX_TRUST_LIST_IDS} trust lists`,
        },
      ],
    }
  if (!existing) {
    const input = {
      id,
      description: ANCHORS_TRUST_LIST_DESCRIPTION,
      source: { type: 'pem' as const, certificates },
      graceSeconds: ANCHORS_TRUST_LIST_GRACE_SECONDS,
    }
    await repo.upsert(trustListColumns(input, undefined, new Date()), tx)
    await recordAudit(tx, {
      tenantId,
      actorClientId,
      action: 'create',
      resourceType: 'trust-list',
      resourceId: id,
      detail: { convertedFrom: 'trustAnchors' },
    })
  }
  return { data: { ...rest, trustListIds }, issues: [] }
}
