import type { SessionKind } from '@credential-service/core-domain'

/** Sessions whose kind this process knows: a kind never changes, so entries never go stale. */
const MAX_REMEMBERED = 10_000
const kinds = new Map<string, SessionKind>()

/**
 * Session ids do not say their kind, so a read looks in one table and then the other. Kinds this
 * process created or read are remembered, and a read (a poll, mostly) looks in the right table
 * first: one statement instead of two for a presentation session.
 */
export function rememberSessionKind(tenantId: string, id: string, kind: SessionKind): void {
  if (kinds.size >= MAX_REMEMBERED) kinds.clear()
  kinds.set(`${tenantId}/${id}`, kind)
}

export function rememberedSessionKind(tenantId: string, id: string): SessionKind | undefined {
  return kinds.get(`${tenantId}/${id}`)
}
