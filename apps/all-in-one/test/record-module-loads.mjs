// `node --import` hook for idle-modules.test.ts: appends the URL of every module the process
// loads (ESM imports and CommonJS requires alike) to the file named by RECORD_MODULE_LOADS, as it
// happens, so the test reads what a started process has loaded without stopping it first.
import { appendFileSync } from 'node:fs'
import { registerHooks } from 'node:module'

const out = process.env.RECORD_MODULE_LOADS
if (out) {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(out, `${url}\n`)
      return nextLoad(url, context)
    },
  })
}
