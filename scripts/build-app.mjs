// Bundles app entry points (src/main.ts → dist/main.js, src/cli/x.ts → dist/cli/x.js): workspace packages are compiled in (they export
// TypeScript source), npm dependencies stay external and load from node_modules, except those COMPILED_IN names. What is loaded
// on first use (`import()`) goes to a chunk of its own, loaded then.
//
// The bundle resolves its external imports from the app's own node_modules (no hoisting), and the image installs
// only the app's production dependencies (`pnpm deploy --prod`). So every package the bundle imports must be a
// `dependencies` entry of the app; workspace packages, compiled in, are devDependencies. The build fails otherwise.

import { cpSync, readFileSync, rmSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

// drizzle-orm's package.json holds a 179 KB `exports` map that Node parses again for each of its modules a process loads: most of
// 0.7 s of CPU per process start. Compiled in, an app is ready on 1.0-1.3 s of CPU instead of 1.7-2.0 s (issue 20); idle memory
// after 30 s is the same within its spread. It is a devDependency of the apps for that reason.
const COMPILED_IN = ['drizzle-orm']
const compiledIn = (specifier) =>
  specifier.startsWith('@credential-service/') ||
  COMPILED_IN.some((name) => specifier === name || specifier.startsWith(`${name}/`))

const entries = process.argv.length > 2 ? process.argv.slice(2) : ['src/main.ts']
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// BUILD_OUTDIR: the tests' bundles go to their own folder (scripts/test-bundles.ts).
const outdir = process.env.BUILD_OUTDIR || 'dist'

rmSync(outdir, { recursive: true, force: true })
const result = await build({
  entryPoints: entries,
  outdir,
  outbase: 'src',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  splitting: true,
  sourcemap: true,
  sourcesContent: false,
  // Issue 20: one character past U+00FF anywhere in a bundle (a comment's "…") makes V8 hold its
  // whole source as a two-byte string, twice the memory for the life of the process.
  charset: 'ascii',
  metafile: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-npm-dependencies',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          compiledIn(args.path) ? undefined : { path: args.path, external: true },
        )
      },
    },
  ],
})
// What `charset: 'ascii'` leaves alone (comments esbuild keeps, regular expression literals) fails
// the build: one such character makes V8 hold the whole bundle as a two-byte string (issue 44).
let wide = 0
for (const file of Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'))) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!/[\u0100-\uffff]/.test(line)) return
      wide++
      console.error(
        `${file}:${i + 1}: a character past U+00FF doubles the memory of the bundle's source: write it as an escape or in ASCII`,
      )
    })
}
if (wide > 0) process.exit(1)
// The migrator reads SQL files at run time: ship them beside the bundle.
cpSync(join(root, 'packages/db-schema/migrations'), join(outdir, 'migrations'), { recursive: true })

const manifest = JSON.parse(readFileSync('package.json', 'utf8'))
const declared = new Set(Object.keys(manifest.dependencies ?? {}))
const builtins = new Set(builtinModules)
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')
const missing = new Set()
for (const output of Object.values(result.metafile.outputs)) {
  for (const { path, external } of output.imports) {
    if (!external || path.startsWith('node:') || builtins.has(path)) continue
    if (!declared.has(packageOf(path))) missing.add(packageOf(path))
  }
}
if (missing.size > 0) {
  console.error(
    `${manifest.name}: the bundle imports ${[...missing].sort().join(', ')} at run time; ` +
      'add each to "dependencies" (as "catalog:") in its package.json',
  )
  process.exit(1)
}
