// Bundles app entry points (src/main.ts → dist/main.js, src/cli/x.ts → dist/cli/x.js): workspace packages are compiled in (they export
// TypeScript source), npm dependencies stay external and load from node_modules.
import { cpSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const entries = process.argv.length > 2 ? process.argv.slice(2) : ['src/main.ts']
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

rmSync('dist', { recursive: true, force: true })
await build({
  entryPoints: entries,
  outdir: 'dist',
  outbase: 'src',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-npm-dependencies',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@credential-service/') ? undefined : { path: args.path, external: true },
        )
      },
    },
  ],
})
// The migrator reads SQL files at run time: ship them beside the bundle.
cpSync(join(root, 'packages/db-schema/migrations'), 'dist/migrations', { recursive: true })
