// `node --import` hook for idle-modules.test.ts and tracing.test.ts: appends the URL of every module
// the process loads (ESM imports and CommonJS requires alike) to the file named by
// RECORD_MODULE_LOADS, as it happens, so a test reads what a started process has loaded without
// stopping it first. Works on every Node the README names (20.19+), see the fallback below.
import { appendFileSync } from 'node:fs'
import module from 'node:module'
import { pathToFileURL } from 'node:url'
import { isMainThread } from 'node:worker_threads'

const out = process.env.RECORD_MODULE_LOADS

/** The loader hook: in this thread (registerHooks) or in Node 20's hooks thread (register). */
export function load(url, context, nextLoad) {
  appendFileSync(out, `${url}\n`)
  return nextLoad(url, context)
}

if (out && isMainThread) {
  if (module.registerHooks) {
    // Node 22.15+: synchronous hooks in this thread see imports and requires alike.
    module.registerHooks({ load })
  } else {
    // Node 20.19 to 22.14: the asynchronous hooks (this file's `load`, in the hooks thread) see
    // ESM imports only, so CommonJS loads are recorded where the CommonJS loader reads each file.
    module.register(import.meta.url)
    const loadFile = module.Module.prototype.load
    module.Module.prototype.load = function (filename) {
      appendFileSync(out, `${pathToFileURL(filename).href}\n`)
      return loadFile.call(this, filename)
    }
  }
}
