import { useQuery } from '@tanstack/react-query'

/**
 * The ids of a tenant collection a form may reference (key chains, providers, endpoints): the
 * first 100 (the API's largest page), for suggestions only; empty when `enabled` is false (the
 * roles cannot list them) or the list fails, and the id is then typed.
 */
export function useReferenceIds(
  queryKey: readonly unknown[],
  list: (query: { limit: number }) => Promise<{ items: { id: string }[] }>,
  enabled: boolean,
): string[] {
  const query = useQuery({
    queryKey: [...queryKey, 'ids'],
    queryFn: () => list({ limit: 100 }),
    enabled,
  })
  return query.data?.items.map((item) => item.id) ?? []
}
