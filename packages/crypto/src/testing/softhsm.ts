import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadModule } from '../providers/pkcs11-token'

/** The process's loaded PKCS#11 module, for tests that act on the token behind the provider's back. */
export const loadPkcs11Module = loadModule

/** Debian's SoftHSM2 module (`apt-get install softhsm2`); SOFTHSM2_MODULE names another. */
export const SOFTHSM_MODULE = process.env.SOFTHSM2_MODULE ?? '/usr/lib/softhsm/libsofthsm2.so'

export interface SoftHsmToken {
  module: string
  tokenLabel: string
  pin: string
  /** SOFTHSM2_CONF for processes the test starts: they see the same tokens. */
  conf: string
}

// SoftHSM2 reads its configuration once, at C_Initialize: one temporary token folder per process,
// kept where a test file loaded in the same worker after this one finds it.
const STATE = Symbol.for('credential-service.softhsm-conf')
type WithState = typeof globalThis & { [STATE]?: string }

function processConf(): string {
  const global = globalThis as WithState
  if (global[STATE]) return global[STATE]
  const folder = mkdtempSync(join(tmpdir(), 'cs-softhsm-'))
  mkdirSync(join(folder, 'tokens'))
  const conf = join(folder, 'softhsm2.conf')
  writeFileSync(
    conf,
    `directories.tokendir = ${join(folder, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`,
  )
  process.env.SOFTHSM2_CONF = conf
  global[STATE] = conf
  return conf
}

/**
 * A fresh SoftHSM2 token with a random label and PIN, in a temporary folder of this process (no
 * global state): made through the module itself (C_InitToken on the free slot, then C_InitPIN), as
 * SoftHSM2 sees tokens made by another program only at its next C_Initialize.
 */
export async function createSoftHsmToken(): Promise<SoftHsmToken> {
  if (!existsSync(SOFTHSM_MODULE)) {
    throw new Error(
      `SoftHSM2 is not installed (${SOFTHSM_MODULE}): apt-get install softhsm2, or set SOFTHSM2_MODULE`,
    )
  }
  const conf = processConf()
  const { binding, pkcs11 } = await loadModule(SOFTHSM_MODULE)
  const tokenLabel = `test-${randomBytes(6).toString('hex')}`
  const pin = randomBytes(8).toString('hex')
  const soPin = randomBytes(8).toString('hex')
  const free = pkcs11
    .C_GetSlotList(true)
    .find((slot) => (pkcs11.C_GetTokenInfo(slot).flags & binding.CKF_TOKEN_INITIALIZED) === 0)
  if (!free) throw new Error('SoftHSM2 has no free slot')
  pkcs11.C_InitToken(free, soPin, tokenLabel.padEnd(32))
  const slot = pkcs11.C_GetSlotList(true).find((s) => pkcs11.C_GetTokenInfo(s).label.trim() === tokenLabel)
  if (!slot) throw new Error(`SoftHSM2 token ${tokenLabel} was not made`)
  const session = pkcs11.C_OpenSession(slot, binding.CKF_SERIAL_SESSION | binding.CKF_RW_SESSION)
  try {
    pkcs11.C_Login(session, binding.CKU_SO, soPin)
    pkcs11.C_InitPIN(session, pin)
    pkcs11.C_Logout(session)
  } finally {
    pkcs11.C_CloseSession(session)
  }
  return { module: SOFTHSM_MODULE, tokenLabel, pin, conf }
}

async function slotOf(token: SoftHsmToken) {
  const { pkcs11 } = await loadModule(token.module)
  const slot = pkcs11
    .C_GetSlotList(true)
    .find((s) => pkcs11.C_GetTokenInfo(s).label.trim() === token.tokenLabel)
  if (!slot) throw new Error(`no token ${token.tokenLabel}`)
  return slot
}

/** Every session this process has on the token closed, as a token reset or an HSM failover does. */
export async function dropSoftHsmSessions(token: SoftHsmToken): Promise<void> {
  const { pkcs11 } = await loadModule(token.module)
  pkcs11.C_CloseAllSessions(await slotOf(token))
}

/** The user PIN changed behind the provider's back; the process's sessions and login are gone with it. */
export async function changeSoftHsmPin(token: SoftHsmToken, from: string, to: string): Promise<void> {
  await dropSoftHsmSessions(token)
  const { binding, pkcs11 } = await loadModule(token.module)
  const session = pkcs11.C_OpenSession(
    await slotOf(token),
    binding.CKF_SERIAL_SESSION | binding.CKF_RW_SESSION,
  )
  try {
    pkcs11.C_Login(session, binding.CKU_USER, from)
    pkcs11.C_SetPIN(session, from, to)
    pkcs11.C_Logout(session)
  } finally {
    pkcs11.C_CloseSession(session)
  }
}
