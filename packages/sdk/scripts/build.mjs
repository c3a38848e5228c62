// Builds dist/ for publishing: ES modules and declarations in dist/esm (tsc), one CommonJS bundle in
// dist/cjs (esbuild) with a copy of the declarations. Plain Node, so packing needs no tsx.
import { execFileSync } from 'node:child_process'
import { cpSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

rmSync(dist, { recursive: true, force: true })
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
await build({
  entryPoints: [join(root, 'src/index.ts')],
  outfile: join(dist, 'cjs/index.js'),
  bundle: true,
  format: 'cjs',
  platform: 'neutral',
  target: 'es2022',
  logLevel: 'warning',
})
cpSync(join(dist, 'esm'), join(dist, 'cjs'), { recursive: true, filter: (path) => !path.endsWith('.js') })
// The package is "type": "module"; this marks the CommonJS half (its .js and .d.ts files) as such.
writeFileSync(join(dist, 'cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`)
