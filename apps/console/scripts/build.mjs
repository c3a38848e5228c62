// Builds the admin console (Vite) into dist/ (BUILD_OUTDIR for the tests' copy) and checks the
// budget of issue 22: the JavaScript a first visit loads (the entry and the chunks it imports
// statically, not those loaded on demand) must stay within 250 KB gzip. Prints the size; fails over.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'vite'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const BUDGET_BYTES = 250 * 1024
const outDir = join(root, process.env.BUILD_OUTDIR || 'dist')

// A production build whatever the caller's NODE_ENV (vitest's global setup runs this with `test`,
// which would make React's development build).
process.env.NODE_ENV = 'production'
await build({ root, mode: 'production', logLevel: 'warn', build: { outDir } })

const manifest = initialScripts(readFileSync(join(outDir, 'index.html'), 'utf8'))
let total = 0
for (const file of manifest) total += gzipSync(readFileSync(join(outDir, file))).length
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`
console.log(
  `console: initial JavaScript ${kb(total)} gzip (${manifest.length} files; budget ${kb(BUDGET_BYTES)})`,
)
if (total > BUDGET_BYTES) {
  console.error(`console: the initial JavaScript exceeds its budget of ${kb(BUDGET_BYTES)} gzip (issue 22)`)
  process.exit(1)
}

/** The scripts index.html loads at once: its module script and the chunks it preloads. */
function initialScripts(html) {
  const files = new Set()
  for (const [, src] of html.matchAll(/<script[^>]+src="\/console\/([^"]+\.js)"/g)) files.add(src)
  for (const [, href] of html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="\/console\/([^"]+\.js)"/g))
    files.add(href)
  if (files.size === 0) throw new Error('console: index.html loads no script')
  return [...files]
}
