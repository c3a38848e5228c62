/**
 * Each bench flow comes from an address of its own, as wallets do: its requests carry
 * `X-Forwarded-For` (the servers believe it from loopback, TRUST_PROXY's default). With one
 * address for every flow, each rate-limit counter would be hit hundreds of times a minute, the
 * rare worst case, instead of a few times per wallet.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { randomBytes } from 'node:crypto'

const address = new AsyncLocalStorage<string>()
const plainFetch = globalThis.fetch
let sentByFlows = 0

globalThis.fetch = (input, init) => {
  const from = address.getStore()
  if (!from) return plainFetch(input, init)
  sentByFlows++
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined))
  headers.set('x-forwarded-for', from)
  return plainFetch(input, { ...init, headers })
}

/** A documentation address (2001:db8::/32) of a /64 of its own. */
const randomAddress = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`

/** `flow`, each run from a new address. */
export const fromOwnAddress =
  <T>(flow: () => Promise<T>) =>
  (): Promise<T> =>
    address.run(randomAddress(), flow)

/** HTTP requests the flows have sent so far (the bench's requests per flow). */
export const requestsSentByFlows = () => sentByFlows
