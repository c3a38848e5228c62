import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const script = new URL('./build-app.mjs', import.meta.url).pathname
const scratch: string[] = []
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

/** An app folder whose src/main.ts imports `imports`, with `dependencies` declared. */
function app(imports: string[], dependencies: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'build-app-'))
  scratch.push(dir)
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'probe-app', dependencies }))
  writeFileSync(
    join(dir, 'src/main.ts'),
    `${imports.map((name, i) => `import * as m${i} from '${name}'`).join('\n')}\nconsole.log(${imports.map((_, i) => `m${i}`).join(', ')})\n`,
  )
  return dir
}
const build = (cwd: string) => spawnSync(process.execPath, [script, 'src/main.ts'], { cwd, encoding: 'utf8' })

describe('issue 13: scripts/build-app.mjs (the image installs only what an app declares)', () => {
  it('fails, naming each package, when the bundle imports one its package.json does not declare', () => {
    const result = build(app(['jose', '@fastify/swagger/index.js', 'node:fs', 'fs'], { zod: 'catalog:' }))
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      'probe-app: the bundle imports @fastify/swagger, jose at run time; add each to "dependencies"',
    )
  })

  it('builds when every imported package is a dependency', () => {
    const dir = app(['jose', 'node:fs'], { jose: 'catalog:' })
    const result = build(dir)
    expect(result.status, result.stderr).toBe(0)
    expect(readdirSync(join(dir, 'dist')).sort()).toStrictEqual(['main.js', 'main.js.map', 'migrations'])
  })

  it('issue 44: fails, naming the line, when the bundle keeps a character past U+00FF (the whole source would be held as a two-byte string)', () => {
    const dir = app(['node:fs'], {})
    writeFileSync(
      join(dir, 'src/main.ts'),
      "// kept by esbuild: a regular expression literal\nconsole.log(/a…b/.test('x'))\n",
    )
    const wide = build(dir)
    expect(wide.status).toBe(1)
    expect(wide.stderr).toMatch(/dist\/main\.js:\d+: a character past U\+00FF doubles the memory/)
    writeFileSync(join(dir, 'src/main.ts'), "console.log(/a\\u2026b/.test('x'), '§ is Latin-1')\n")
    expect(build(dir).status).toBe(0)
  })
})
