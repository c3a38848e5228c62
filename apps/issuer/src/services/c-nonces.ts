import { randomBytes, timingSafeEqual } from 'node:crypto'
import { tenantMac } from './server-nonces'

/** A c_nonce this issuer made, as the credential endpoint spends it. */
export interface IssuedNonce {
  value: string
  expiresAt: Date
}

export interface CNonces {
  /** A fresh c_nonce for the tenant (OpenID4VCI 1.0 §7.2), valid for `seconds`. */
  issue(tenantId: string): string
  /** The nonce when this issuer made it for this tenant and it has not expired; else undefined. */
  check(tenantId: string, nonce: string): IssuedNonce | undefined
}

/** How long a c_nonce lives (OpenID4VCI 1.0 §7.2 leaves it to the issuer). */
export const C_NONCE_SECONDS = 300

const MAC_BYTES = 16

/**
 * Stateless c_nonces (issue 44): `<expiry>.<random>.<MAC>`, base36 seconds, 18 random bytes and an
 * HMAC-SHA256 over tenant, expiry and random part, all base64url. The nonce endpoint stores
 * nothing, so it costs no statement and anyone calling it fills no table; single use is the
 * credential endpoint's: it records the nonce as spent, until its expiry, in the statement that
 * reads the session (issuance.ts `getSpendingNonce`). Unpredictable by the random part (§7.2),
 * tenant-scoped and time-limited by the MAC (I-51).
 */
export function createCNonces(key: Buffer, seconds: number, now: () => Date): CNonces {
  const mac = (tenantId: string, body: string) => tenantMac(key, tenantId, body, MAC_BYTES)
  return {
    issue(tenantId) {
      const expiry = Math.ceil(now().getTime() / 1000) + seconds
      const body = `${expiry.toString(36)}.${randomBytes(18).toString('base64url')}`
      return `${body}.${mac(tenantId, body).toString('base64url')}`
    },
    check(tenantId, nonce) {
      if (nonce.length > 80) return undefined
      const parts = nonce.split('.')
      if (parts.length !== 3) return undefined
      const [expiryText, random, macText] = parts as [string, string, string]
      if (!/^[0-9a-z]{1,10}$/.test(expiryText) || !/^[\w-]{24}$/.test(random) || !/^[\w-]{22}$/.test(macText))
        return undefined
      const given = Buffer.from(macText, 'base64url')
      const expected = mac(tenantId, `${expiryText}.${random}`)
      if (!timingSafeEqual(given, expected)) return undefined
      const expiresAt = new Date(Number.parseInt(expiryText, 36) * 1000)
      return expiresAt > now() ? { value: nonce, expiresAt } : undefined
    },
  }
}
