import type * as Pkcs11 from 'pkcs11js'
import { KeyProviderError } from './provider'

type Binding = typeof import('pkcs11js')
type Handle = Buffer

export interface Pkcs11TokenOptions {
  /** Path of the PKCS#11 module (shared library) of the HSM vendor, e.g. /usr/lib/softhsm/libsofthsm2.so. */
  module: string
  /** The token's label (CKA_LABEL of the token, blanks trimmed): the slot is found by it. */
  tokenLabel: string
  /** User PIN. Never logged, never part of an error. */
  pin: string
  /** Sessions kept open for signing at once (default 4); more callers wait for a free one. */
  sessions?: number | undefined
}

/** What a call on the token gets: the binding's constants and a logged-in session of its own. */
export interface TokenSession {
  pkcs11: Pkcs11.PKCS11
  binding: Binding
  session: Handle
}

// Return values after which a session, or the whole token, must be opened again (PKCS#11 2.40 §5.1).
const LOST = new Set([
  'CKR_DEVICE_REMOVED',
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_TOKEN_NOT_RECOGNIZED',
  'CKR_SLOT_ID_INVALID',
])
const SESSION_GONE = new Set([
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_DEVICE_ERROR',
  'CKR_DEVICE_MEMORY',
  'CKR_GENERAL_ERROR',
  'CKR_FUNCTION_FAILED',
  'CKR_OPERATION_ACTIVE',
])
const BAD_PIN = new Set([
  'CKR_PIN_INCORRECT',
  'CKR_PIN_LOCKED',
  'CKR_PIN_EXPIRED',
  'CKR_PIN_INVALID',
  'CKR_PIN_LEN_RANGE',
])

/** The PKCS#11 return value name of a binding error (`CKR_...`), if it is one. */
export function returnValue(error: unknown): string | undefined {
  const message = (error as { message?: string })?.message ?? ''
  return /^CKR_[A-Z_]+/.exec(message)?.[0]
}

// One loaded and initialised module per path and process: C_Initialize may run once per process.
const modules = new Map<string, Promise<{ binding: Binding; pkcs11: Pkcs11.PKCS11 }>>()

/** The module at `path`, loaded and initialised once per process. */
export function loadModule(path: string) {
  let loaded = modules.get(path)
  if (!loaded) {
    loaded = (async () => {
      let binding: Binding
      try {
        binding = ((await import('pkcs11js')) as { default?: Binding }).default ?? (await import('pkcs11js'))
      } catch (cause) {
        throw new KeyProviderError('the PKCS#11 binding (pkcs11js) is not installed or did not build', {
          cause,
          reason: 'misconfigured',
        })
      }
      const pkcs11 = new binding.PKCS11()
      try {
        pkcs11.load(path)
      } catch (cause) {
        throw new KeyProviderError(`PKCS#11 module '${path}' cannot be loaded`, {
          cause,
          reason: 'misconfigured',
        })
      }
      try {
        pkcs11.C_Initialize({ flags: binding.CKF_OS_LOCKING_OK })
      } catch (cause) {
        if (returnValue(cause) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') {
          throw new KeyProviderError(
            `PKCS#11 module '${path}': C_Initialize failed (${returnValue(cause)})`,
            {
              cause,
              reason: 'unavailable',
            },
          )
        }
      }
      return { binding, pkcs11 }
    })()
    modules.set(path, loaded)
    // A module that failed to load is tried again by the next caller (the file may be mounted later).
    loaded.catch(() => modules.delete(path))
  }
  return loaded
}

/**
 * A token of a PKCS#11 module, found by its label, with a pool of logged-in sessions. A session
 * runs one operation at a time (PKCS#11 2.40 §5.2), so concurrent signatures each take one. A
 * session the token dropped is closed and replaced; when the token itself went away, the slot is
 * looked up again at the next call. Several processes may use the same token: each has its own
 * sessions and login (the module serialises access to the token).
 */
export function openToken(options: Pkcs11TokenOptions) {
  const size = Math.max(1, options.sessions ?? 4)
  const where = `PKCS#11 token '${options.tokenLabel}'`
  let slot: Promise<Handle> | undefined
  const idle: Handle[] = []
  let open = 0
  const waiting: Array<{ resolve: (session: Handle) => void; reject: (error: unknown) => void }> = []
  let generation = 0

  async function findSlot(): Promise<Handle> {
    const { pkcs11 } = await loadModule(options.module)
    let slots: Handle[]
    try {
      slots = pkcs11.C_GetSlotList(true)
    } catch (cause) {
      throw new KeyProviderError(`${where}: C_GetSlotList failed (${returnValue(cause)})`, {
        cause,
        reason: 'unavailable',
      })
    }
    const found = slots.find((candidate) => {
      try {
        return pkcs11.C_GetTokenInfo(candidate).label.trim() === options.tokenLabel
      } catch {
        return false
      }
    })
    if (!found) {
      throw new KeyProviderError(`${where} is not present in module '${options.module}'`, {
        reason: 'misconfigured',
      })
    }
    return found
  }

  async function openSession(): Promise<Handle> {
    const { binding, pkcs11 } = await loadModule(options.module)
    slot ??= findSlot()
    slot.catch(() => {
      slot = undefined
    })
    const slotHandle = await slot
    let session: Handle
    try {
      session = pkcs11.C_OpenSession(slotHandle, binding.CKF_SERIAL_SESSION | binding.CKF_RW_SESSION)
    } catch (cause) {
      if (LOST.has(returnValue(cause) ?? '')) slot = undefined
      throw new KeyProviderError(`${where}: C_OpenSession failed (${returnValue(cause)})`, {
        cause,
        reason: 'unavailable',
      })
    }
    try {
      pkcs11.C_Login(session, binding.CKU_USER, options.pin)
    } catch (cause) {
      // The login state belongs to the application, not the session: the pool's first session logged in.
      if (returnValue(cause) !== 'CKR_USER_ALREADY_LOGGED_IN') {
        closeQuietly(pkcs11, session)
        const code = returnValue(cause) ?? 'error'
        throw new KeyProviderError(`${where}: login refused (${code})`, {
          reason: BAD_PIN.has(code) ? 'misconfigured' : 'unavailable',
        })
      }
    }
    return session
  }

  async function acquire(): Promise<Handle> {
    const session = idle.pop()
    if (session) return session
    if (open < size) {
      open++
      try {
        return await openSession()
      } catch (error) {
        open--
        throw error
      }
    }
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
  }

  function release(session: Handle) {
    const next = waiting.shift()
    if (next) next.resolve(session)
    else idle.push(session)
  }

  /** Drops a broken session; a waiting caller opens a fresh one. */
  async function discard(session: Handle, lost: boolean) {
    const { pkcs11 } = await loadModule(options.module)
    closeQuietly(pkcs11, session)
    open--
    if (lost) {
      slot = undefined
      generation++
      for (const stale of idle.splice(0)) {
        closeQuietly(pkcs11, stale)
        open--
      }
    }
    // A place in the pool came free: the next waiter opens a session of its own.
    const next = waiting.shift()
    if (next) acquire().then(next.resolve, next.reject)
  }

  return {
    where,
    /**
     * Runs `call` on a pooled session. A PKCS#11 failure becomes a KeyProviderError: `unavailable`
     * when the session or token went away (the session is replaced), `refused` otherwise.
     */
    async withSession<T>(call: (token: TokenSession) => Promise<T> | T): Promise<T> {
      const { binding, pkcs11 } = await loadModule(options.module)
      const session = await acquire()
      const started = generation
      try {
        const result = await call({ binding, pkcs11, session })
        release(session)
        return result
      } catch (error) {
        const code = returnValue(error)
        if (code && (LOST.has(code) || SESSION_GONE.has(code))) {
          await discard(session, LOST.has(code) && started === generation)
          throw new KeyProviderError(`${where}: ${code}`, { cause: error, reason: 'unavailable' })
        }
        release(session)
        if (error instanceof KeyProviderError) throw error
        throw new KeyProviderError(`${where}: ${code ?? (error as Error).message}`, { cause: error })
      }
    },
    /** Mechanisms of the token (CKM_ numbers), to offer EdDSA only where the token has it. */
    async mechanisms(): Promise<number[]> {
      const { pkcs11 } = await loadModule(options.module)
      slot ??= findSlot()
      return pkcs11.C_GetMechanismList(await slot)
    },
    /** Closes this pool's sessions (the module stays loaded for the process). */
    async close(): Promise<void> {
      const loaded = modules.get(options.module)
      if (!loaded) return
      const { pkcs11 } = await loaded
      for (const session of idle.splice(0)) {
        closeQuietly(pkcs11, session)
        open--
      }
    },
  }
}
export type Pkcs11Token = ReturnType<typeof openToken>

function closeQuietly(pkcs11: Pkcs11.PKCS11, session: Handle) {
  try {
    pkcs11.C_CloseSession(session)
  } catch {
    // Already closed by the token.
  }
}
