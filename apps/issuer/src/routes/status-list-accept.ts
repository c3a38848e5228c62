/** The forms a Status List Token is served in (TSL §8.1), the JWT first: it wins a tie. */
export const STATUS_LIST_FORMS = ['application/statuslist+jwt', 'application/statuslist+cwt'] as const
export type StatusListForm = (typeof STATUS_LIST_FORMS)[number]

/**
 * The form an `Accept` header asks for (RFC 9110 §12.5.1): each form takes the `q` of the most
 * specific range that matches it (`type/subtype` over `type/*` over `*\/*`), the highest `q` above
 * 0 wins. No header asks for anything, so for the JWT, as before the CWT form existed; undefined
 * when the header accepts neither form (406).
 */
export function negotiateStatusListForm(accept: string | undefined): StatusListForm | undefined {
  if (!accept?.trim()) return STATUS_LIST_FORMS[0]
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase())
    const q = params.find((param) => param.startsWith('q='))
    return { range, q: q === undefined ? 1 : Number(q.slice(2)) || 0 }
  })
  let chosen: StatusListForm | undefined
  let best = 0
  for (const form of STATUS_LIST_FORMS) {
    const specificity = (range: string) =>
      range === form ? 3 : range === 'application/*' ? 2 : range === '*/*' ? 1 : 0
    const match = ranges
      .filter(({ range }) => specificity(range) > 0)
      .sort((a, b) => specificity(b.range) - specificity(a.range))[0]
    if (match && match.q > best) {
      chosen = form
      best = match.q
    }
  }
  return chosen
}

/** Whether `If-None-Match` names `etag`, by weak comparison (RFC 9110 §13.1.2). */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  return ifNoneMatch?.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag)) ?? false
}
