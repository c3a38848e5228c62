import { type TrustListRow, trustListState } from '@credential-service/db-schema'

/**
 * The certificates the trust lists named by `ids` (a presentation configuration's or a wallet
 * provider's) contribute at `now`, and the lists that contribute nothing because they are past
 * NextUpdate + grace or never fetched (fail closed).
 */
export function trustListCertificates(lists: TrustListRow[], ids: string[] | undefined, now: Date) {
  const certificates: string[] = []
  const unusable: string[] = []
  for (const id of ids ?? []) {
    const list = lists.find((row) => row.id === id)
    if (!list) continue
    const state = trustListState(list, now)
    if (state === 'current') certificates.push(...list.certificates)
    else unusable.push(`'${id}' (${state === 'expired' ? 'past NextUpdate + grace' : 'not fetched yet'})`)
  }
  return { certificates, unusable }
}
