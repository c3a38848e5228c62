import { base64url, type JWK } from 'jose'
import type { Signer } from './signer'

// Loaded on first issuance: the management app imports this package but never issues.
let libraries:
  | Promise<[typeof import('@sd-jwt/crypto-nodejs'), typeof import('@sd-jwt/sd-jwt-vc')]>
  | undefined
const loadLibraries = () =>
  (libraries ??= Promise.all([import('@sd-jwt/crypto-nodejs'), import('@sd-jwt/sd-jwt-vc')]))

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
  /** Decoy digests added at the top level (SD-JWT §4.2.5), so the number of claims does not show. */
  decoys?: number
  /** Status list entry (SD-JWT VC §3.2.2.2, TSL §6.1): a plain claim, never a disclosure. */
  status?: { idx: number; uri: string } | undefined
}

type Frame = { _sd?: string[]; _sd_decoy?: number; [key: string]: unknown }

/** The `@sd-jwt` disclosure frame for a set of paths: the last segment of each goes in its level's `_sd`. */
export function disclosureFrame(paths: string[][], decoys: number): Frame {
  const frame: Frame = decoys > 0 ? { _sd_decoy: decoys } : {}
  for (const path of paths) {
    let level = frame
    for (const part of path.slice(0, -1)) {
      level[part] ??= {}
      level = level[part] as Frame
    }
    const last = path.at(-1) as string
    level._sd = [...(level._sd ?? []), last]
  }
  return frame
}

/**
 * Issues an SD-JWT VC (`typ` dc+sd-jwt; draft-ietf-oauth-sd-jwt-vc) with `@sd-jwt/sd-jwt-vc`,
 * signed through the Signer port with `x5c` from the key chain.
 */
export async function issueSdJwtVc(options: IssueSdJwtVcOptions): Promise<string> {
  const { signer } = options
  const [{ digest, generateSalt }, { SDJwtVcInstance }] = await loadLibraries()
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
  return instance.issue(payload, disclosureFrame(options.disclosable, options.decoys ?? 0) as never, {
    header: { kid: signer.kid, ...(signer.x5c.length ? { x5c: signer.x5c } : {}) },
  })
}
