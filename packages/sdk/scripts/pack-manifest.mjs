// `strip` (prepack): the packed manifest gets no devDependencies. They name workspace packages and
// pnpm catalogs (`workspace:*`, `catalog:`), which npm leaves as they are and no registry resolves;
// a consumer never installs them anyway. `restore` (postpack) puts the workspace manifest back.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const manifest = join(root, 'package.json')
const saved = join(root, 'package.json.workspace')

if (process.argv[2] === 'strip') {
  // A pack that died before its postpack left the workspace manifest saved: keep that one.
  if (!existsSync(saved)) writeFileSync(saved, readFileSync(manifest))
  const { devDependencies: _dev, ...packed } = JSON.parse(readFileSync(saved, 'utf8'))
  writeFileSync(manifest, `${JSON.stringify(packed, null, 2)}\n`)
} else if (process.argv[2] === 'restore') {
  if (existsSync(saved)) renameSync(saved, manifest)
} else {
  throw new Error('usage: node scripts/pack-manifest.mjs strip|restore')
}
