import type { Signer } from './signer'
import { signJws } from './signer'

// Loaded with the first list token: only the issuer signs them.
let library: Promise<typeof import('@sd-jwt/jwt-status-list')> | undefined
const loadLibrary = () => (library ??= import('@sd-jwt/jwt-status-list'))

export interface SignStatusListTokenOptions {
  signer: Signer
  /** The list's URI: `sub` of the token, equal to the `uri` in the credentials (TSL §5.1). */
  uri: string
  bits: 1 | 2 | 4 | 8
  size: number
  /** The entries that are not VALID (0); every other index is VALID. */
  entries: readonly { idx: number; status: number }[]
  issuedAt: Date
  expiresAt: Date
  /** Seconds a relying party may cache the token before fetching it again (TSL §5.1 `ttl`). */
  ttlSeconds: number
}

/**
 * A Status List Token as JWT (draft-ietf-oauth-status-list §5.1, checklist F-30, F-31): `typ`
 * statuslist+jwt, `x5c` of the key chain, `sub` the list URI, `iat`, `exp`, `ttl` and
 * `status_list` {bits, lst}; `lst` is packed and DEFLATE-compressed by @sd-jwt/jwt-status-list.
 */
export async function signStatusListToken(options: SignStatusListTokenOptions): Promise<string> {
  const { StatusList, createHeaderAndPayload } = await loadLibrary()
  const statuses = new Array<number>(options.size).fill(0)
  for (const { idx, status } of options.entries) statuses[idx] = status
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
  const { signer } = options
  const { header, payload } = createHeaderAndPayload(
    new StatusList(statuses, options.bits),
    {
      sub: options.uri,
      iat: seconds(options.issuedAt),
      exp: seconds(options.expiresAt),
      ttl: options.ttlSeconds,
    },
    {
      alg: signer.alg,
      typ: 'statuslist+jwt',
      kid: signer.kid,
      ...(signer.x5c.length ? { x5c: signer.x5c } : {}),
    },
  )
  return signJws(signer, header, payload)
}

/**
 * The status at `idx` of a Status List Token whose signature the caller has verified (TSL §8.3):
 * 0 VALID, 1 INVALID, 2 SUSPENDED, … An index past the list is an error.
 */
export async function statusInList(token: string, idx: number): Promise<number> {
  const { getListFromStatusListJWT } = await loadLibrary()
  return getListFromStatusListJWT(token).getStatus(idx)
}
