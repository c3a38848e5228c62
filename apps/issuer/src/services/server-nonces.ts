import { createHmac, timingSafeEqual } from 'node:crypto'

/** Length of one nonce window: a nonce is accepted in its window and the next (2 to 4 minutes). */
const WINDOW_SECONDS = 120

export interface ServerNonces {
  /** A nonce for the tenant (DPoP, RFC 9449 §8; attestation challenge, ABCA): the current window, MACed. */
  issue(tenantId: string): string
  /** True when `nonce` was issued for this tenant in the current or the previous window. */
  valid(tenantId: string, nonce: unknown): boolean
}

/** HMAC-SHA256 of `<tenant>|<input>` under `key`, its first `bytes`: what binds a stateless nonce to its tenant. */
export const tenantMac = (key: Buffer, tenantId: string, input: string, bytes: number): Buffer =>
  createHmac('sha256', key).update(`${tenantId}|${input}`).digest().subarray(0, bytes)

/**
 * Stateless server nonces: `<window>.<HMAC-SHA256(key, tenant|window)>`, so every pod issues and
 * checks them without storage. One instance per use, each with its own key derived from
 * MASTER_SECRET (purposes `dpop-nonce` and `attestation-challenge`).
 */
export function createServerNonces(key: Buffer, now: () => Date): ServerNonces {
  const windowAt = () => Math.floor(now().getTime() / 1000 / WINDOW_SECONDS)
  // Every answer of the token, nonce and credential endpoints carries a nonce: each tenant's MAC
  // of a window is computed once (bounded; cleared whole when full).
  const macs = new Map<string, Buffer>()
  const mac = (tenantId: string, window: number) => {
    const input = `${tenantId}|${window}`
    let value = macs.get(input)
    if (!value) {
      if (macs.size >= 10_000) macs.clear()
      value = tenantMac(key, tenantId, String(window), 18)
      macs.set(input, value)
    }
    return value
  }
  return {
    issue(tenantId) {
      const window = windowAt()
      return `${window.toString(36)}.${mac(tenantId, window).toString('base64url')}`
    },
    valid(tenantId, nonce) {
      if (typeof nonce !== 'string' || nonce.length > 64) return false
      const [windowText, macText] = nonce.split('.')
      if (!windowText || !macText || !/^[0-9a-z]{1,12}$/.test(windowText)) return false
      const window = Number.parseInt(windowText, 36)
      const current = windowAt()
      if (window !== current && window !== current - 1) return false
      const given = Buffer.from(macText, 'base64url')
      const expected = mac(tenantId, window)
      return given.length === expected.length && timingSafeEqual(given, expected)
    },
  }
}
