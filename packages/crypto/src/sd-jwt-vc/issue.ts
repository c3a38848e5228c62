import { randomBytes } from 'node:crypto'
import { base64url, type JWK } from 'jose'
import { selectClaims } from '../claims-path'
import type { Signer } from '../signer'
import { loadSdJwtLibraries } from './libraries'

export interface IssueSdJwtVcOptions {
  signer: Signer
  /** Credential issuer identifier (`iss`). */
  issuer: string
  vct: string
  issuedAt: Date
  expiresAt: Date
  /** Holder key for `cnf.jwk` (key binding); absent for bearer credentials. */
  holderJwk?: JWK | undefined
  claims: Record<string, unknown>
  /** Claim paths issued as selective disclosures; every other claim is plain. */
  disclosable: string[][]
  /**
   * Decoy digests (SD-JWT §4.2.5) added to each object that has selectively disclosable claims, so
   * their number does not show. An object with none gets no `_sd` at all (checklist F-10).
   */
  decoys?: number
  /** Status list entry (SD-JWT VC §3.2.2.2, TSL §6.1): a plain claim, never a disclosure. */
  status?: { idx: number; uri: string } | undefined
}

/** Bytes of every salt: 128 bits, the minimum RFC 9901 §9.3 recommends (checklist F-07). */
export const SALT_BYTES = 16

/**
 * The salt of a disclosure or decoy. @sd-jwt's own generator returns `length` hex characters, so the
 * 16 it asks for carry 64 bits; this one returns 16 random bytes, base64url-encoded, whatever it asks.
 */
export const generateSalt = (): string => randomBytes(SALT_BYTES).toString('base64url')

type Frame = { _sd?: string[]; _sd_decoy?: number; [key: string]: unknown }

/**
 * The `@sd-jwt` disclosure frame for a set of paths: the last segment of each goes in its level's
 * `_sd`, and each such level gets the decoys. Undefined when nothing is disclosable, so the library
 * adds neither `_sd` nor `_sd_alg`.
 */
export function disclosureFrame(paths: string[][], decoys: number): Frame | undefined {
  if (paths.length === 0) return undefined
  const frame: Frame = {}
  for (const path of paths) {
    let level = frame
    for (const part of path.slice(0, -1)) {
      level[part] ??= {}
      level = level[part] as Frame
    }
    const last = path.at(-1) as string
    level._sd = [...(level._sd ?? []), last]
    if (decoys > 0) level._sd_decoy = decoys
  }
  return frame
}

/**
 * Issues an SD-JWT VC (`typ` dc+sd-jwt; draft-ietf-oauth-sd-jwt-vc) with `@sd-jwt/sd-jwt-vc`,
 * signed through the Signer port with `x5c` from the key chain.
 */
export async function issueSdJwtVc(options: IssueSdJwtVcOptions): Promise<string> {
  const { signer } = options
  const [{ digest }, { SDJwtVcInstance }] = await loadSdJwtLibraries()
  const instance = new SDJwtVcInstance({
    signer: async (data: string) => base64url.encode(await signer.sign(new TextEncoder().encode(data))),
    signAlg: signer.alg,
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  })
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
  const payload = {
    ...options.claims,
    iss: options.issuer,
    iat: seconds(options.issuedAt),
    exp: seconds(options.expiresAt),
    vct: options.vct,
    ...(options.holderJwk ? { cnf: { jwk: options.holderJwk } } : {}),
    ...(options.status ? { status: { status_list: options.status } } : {}),
  }
  // A disclosable claim this credential does not carry has nothing to disclose (and a frame level
  // over a missing object would make the library fail on its decoys).
  const present = options.disclosable.filter((path) => selectClaims(options.claims, path) !== undefined)
  return instance.issue(payload, disclosureFrame(present, options.decoys ?? 0) as never, {
    header: { kid: signer.kid, ...(signer.x5c.length ? { x5c: signer.x5c } : {}) },
  })
}
