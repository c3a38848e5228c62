/**
 * `BENCH_KEY_PROVIDER` (issue 40): where the bench tenant's key chain signs. `db` (default): a key
 * in the database. `pkcs11`: a key generated on a SoftHSM2 token the bench makes (softhsm2 must be
 * installed), so each issuance row shows what an HSM signature through PKCS#11 costs; the
 * ceilings stay those of a database key.
 */
import { createSoftHsmToken } from '@credential-service/crypto/testing'

export const KEY_PROVIDER = process.env.BENCH_KEY_PROVIDER ?? 'db'
let serverEnv: Record<string, string> = {}

/** Makes the token before any server starts (SoftHSM2 reads its tokens when a process loads it). */
export async function prepareKeyProvider(): Promise<void> {
  if (KEY_PROVIDER === 'db') return
  if (KEY_PROVIDER !== 'pkcs11') throw new Error(`BENCH_KEY_PROVIDER: db or pkcs11, not '${KEY_PROVIDER}'`)
  const token = await createSoftHsmToken()
  serverEnv = {
    SOFTHSM2_CONF: token.conf,
    PKCS11_MODULE: token.module,
    PKCS11_TOKEN_LABEL: token.tokenLabel,
    PKCS11_PIN: 'env:BENCH_HSM_PIN',
    BENCH_HSM_PIN: token.pin,
  }
}

/** What every server process needs to reach the token. */
export const keyProviderEnv = (): Record<string, string> => serverEnv

/** The key chain's `kmsProvider` for `source: generate`. */
export const keyChainProvider = (): Record<string, string> =>
  KEY_PROVIDER === 'db' ? {} : { kmsProvider: KEY_PROVIDER }
