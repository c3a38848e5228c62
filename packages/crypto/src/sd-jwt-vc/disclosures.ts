import { createHash } from 'node:crypto'
import { SD_JWT_STRUCTURE_NAMES } from '@credential-service/core-domain'
import { decodeJwt } from 'jose'

/** `_sd_alg` values (IANA Named Information Hash Algorithm names) → node's hash names. */
const HASHES: Record<string, string> = { 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' }

class Refused extends Error {}

interface Disclosure {
  /** `[salt, name, value]` (object property) or `[salt, value]` (array element). */
  items: unknown[]
  referenced: boolean
}

function parseDisclosure(encoded: string): unknown[] {
  let items: unknown
  try {
    items = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'))
  } catch {
    throw new Refused('a disclosure is not base64url-encoded JSON')
  }
  if (!Array.isArray(items) || (items.length !== 2 && items.length !== 3) || typeof items[0] !== 'string')
    throw new Refused('a disclosure is not [salt, name, value] or [salt, value]')
  if (items.length === 3 && typeof items[1] !== 'string')
    throw new Refused('a disclosure claim name is not a string')
  // RFC 9901 §7.1 names `_sd` and `...`; `_sd_alg` is refused too (checklist S-76).
  if (items.length === 3 && SD_JWT_STRUCTURE_NAMES.includes(items[1] as string))
    throw new Refused(`a disclosure has the claim name '${items[1]}'`)
  return items
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** RFC 9901 §4.2.4.2: an array element `{"...": digest}` and nothing else. */
const elementDigest = (element: unknown): string | undefined => {
  if (!isObject(element)) return undefined
  const keys = Object.keys(element)
  return keys.length === 1 && keys[0] === '...' && typeof element['...'] === 'string'
    ? element['...']
    : undefined
}

/**
 * The RFC 9901 §7.1 disclosure checks that @sd-jwt 0.19 leaves out (checklist S-130, S-76, F-06,
 * F-11): every disclosure referenced by exactly one digest of the issuer-signed payload or of another
 * disclosed value, no digest twice, `[salt, name, value]` only from `_sd` and `[salt, value]` only
 * from `{"...": digest}`, no disclosed name `_sd`, `_sd_alg`, `...` or one the object already has,
 * and `_sd_alg` only at the top. Digests without a disclosure are decoys or undisclosed (F-09).
 * Returns why the presentation (`<jwt>~<disclosure>~…~<kb-jwt or empty>`) fails, or undefined.
 * The signature is not checked here: call it after the signature verified.
 */
export function checkDisclosures(presentation: string): string | undefined {
  const [jwt = '', ...rest] = presentation.split('~')
  try {
    const payload = decodeJwt(jwt) as Record<string, unknown>
    const alg = payload._sd_alg ?? 'sha-256'
    const hash = typeof alg === 'string' ? HASHES[alg] : undefined
    if (!hash) throw new Refused(`_sd_alg '${String(alg)}' is not supported`)
    const disclosures = new Map<string, Disclosure>()
    // The last part is the KB-JWT, or empty without one.
    for (const encoded of rest.slice(0, -1)) {
      const digest = createHash(hash).update(encoded, 'ascii').digest('base64url')
      if (disclosures.has(digest)) throw new Refused('a disclosure is presented twice')
      disclosures.set(digest, { items: parseDisclosure(encoded), referenced: false })
    }
    const seen = new Set<string>()
    /** The disclosure of a digest (undefined for a decoy or an undisclosed claim), marked as referenced. */
    const reference = (digest: unknown): Disclosure | undefined => {
      if (typeof digest !== 'string') throw new Refused('a digest is not a string')
      if (seen.has(digest)) throw new Refused('a digest appears more than once')
      seen.add(digest)
      const disclosure = disclosures.get(digest)
      if (disclosure) disclosure.referenced = true
      return disclosure
    }
    const visit = (value: unknown, top: boolean): void => {
      if (Array.isArray(value)) {
        for (const element of value) {
          const digest = elementDigest(element)
          if (digest === undefined) visit(element, false)
          else {
            const disclosure = reference(digest)
            if (disclosure && disclosure.items.length !== 2)
              throw new Refused('an array element digest refers to a [salt, name, value] disclosure')
            if (disclosure) visit(disclosure.items[1], false)
          }
        }
        return
      }
      if (!isObject(value)) return
      if (!top && '_sd_alg' in value) throw new Refused('_sd_alg is not at the top level')
      const names = new Set(Object.keys(value))
      const sd = value._sd
      if (sd !== undefined && !Array.isArray(sd)) throw new Refused('_sd is not an array')
      for (const digest of (sd as unknown[] | undefined) ?? []) {
        const disclosure = reference(digest)
        if (!disclosure) continue
        if (disclosure.items.length !== 3)
          throw new Refused('an _sd digest refers to a [salt, value] disclosure')
        const name = disclosure.items[1] as string
        if (names.has(name)) throw new Refused(`the disclosed claim '${name}' is already in its object`)
        names.add(name)
        visit(disclosure.items[2], false)
      }
      for (const [name, member] of Object.entries(value)) if (name !== '_sd') visit(member, false)
    }
    visit(payload, true)
    if ([...disclosures.values()].some((disclosure) => !disclosure.referenced))
      throw new Refused('a disclosure is not referenced by any digest')
    return undefined
  } catch (error) {
    if (error instanceof Refused) return `${error.message} (RFC 9901 §7.1)`
    throw error
  }
}
