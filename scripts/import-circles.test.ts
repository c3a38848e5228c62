import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildImportGraph, findImportCircles, type ImportGraphOptions } from './import-circles'

const workspace: ImportGraphOptions = {
  root: join(import.meta.dirname, '..'),
  include: ['apps/*/src', 'apps/all-in-one/bench', 'packages/*/src'],
  packages: ['apps/*', 'packages/*'],
}

const graph = buildImportGraph(workspace)
const circles = findImportCircles(graph)

describe('issue 21: no import circles in apps/*/src, apps/all-in-one/bench and packages/*/src', () => {
  it('has no circle', () => {
    // Each circle is named; end it by moving what both files need into a small module of its own.
    expect(circles).toStrictEqual([])
  })

  it('reads the whole workspace, workspace packages resolved to their source', () => {
    expect(graph.size).toBeGreaterThan(250)
    expect(graph.get('apps/verifier/src/app.ts')).toContain('packages/server-kit/src/index.ts')
    expect(graph.get('apps/all-in-one/bench/ceiling.ts')).toContain('apps/all-in-one/bench/ceiling-setup.ts')
  })
})

describe('issue 38: the login wing is used through its public interface', () => {
  it('no file outside apps/issuer/src/login/ imports one of its files other than login/index.ts', () => {
    const wing = 'apps/issuer/src/login/'
    const reaching = [...graph].flatMap(([file, imports]) =>
      file.startsWith(wing)
        ? []
        : [...imports]
            .filter((target) => target.startsWith(wing) && target !== `${wing}index.ts`)
            .map((target) => `${file} > ${target}`),
    )
    expect(reaching).toStrictEqual([])
    // The check sees the wing's users (the routes, Interactive Authorization).
    expect(graph.get('apps/issuer/src/routes/authorization.ts')).toContain(`${wing}index.ts`)
  })
})

describe('the import circle check', () => {
  const scratch: string[] = []
  afterAll(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
  })
  /** A workspace of two packages, `a` (apps/a) and `b` (packages/b), made of `files`. */
  const circlesOf = (files: Record<string, string>) => {
    const root = mkdtempSync(join(tmpdir(), 'import-circles-'))
    scratch.push(root)
    const all: Record<string, string> = {
      'apps/a/package.json': JSON.stringify({ name: '@scope/a', exports: { '.': './src/index.ts' } }),
      'packages/b/package.json': JSON.stringify({
        name: '@scope/b',
        exports: { '.': './src/index.ts', './sub': './src/sub.ts' },
      }),
      ...files,
    }
    for (const [path, text] of Object.entries(all)) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      writeFileSync(join(root, path), text)
    }
    return findImportCircles(
      buildImportGraph({
        root,
        include: ['apps/*/src', 'packages/*/src'],
        packages: ['apps/*', 'packages/*'],
      }),
    )
  }

  it('names a circle of relative imports, type-only and `.js`-suffixed ones included', () => {
    expect(
      circlesOf({
        'apps/a/src/index.ts': "export { x } from './x.js'",
        'apps/a/src/x.ts': "import type { Y } from './y'\nexport const x = 1",
        'apps/a/src/y.ts': "import { x } from './index'\nexport type Y = typeof x",
      }),
    ).toStrictEqual(['apps/a/src/index.ts > apps/a/src/x.ts > apps/a/src/y.ts > apps/a/src/index.ts'])
  })

  it('names a circle through a workspace package export and a dynamic import', () => {
    expect(
      circlesOf({
        'apps/a/src/index.ts': "import { b } from '@scope/b/sub'\nexport const a = b",
        'packages/b/src/index.ts': 'export {}',
        'packages/b/src/sub.ts': "export const b = 1\nexport const load = () => import('@scope/a')",
      }),
    ).toStrictEqual(['apps/a/src/index.ts > packages/b/src/sub.ts > apps/a/src/index.ts'])
  })

  it('finds none in a tree whose imports point one way', () => {
    expect(
      circlesOf({
        'apps/a/src/index.ts':
          "import { b } from '@scope/b'\nimport { c } from './c/index'\nexport const a = b + c",
        'apps/a/src/c/index.ts': "import { b } from '@scope/b'\nexport const c = b",
        'packages/b/src/index.ts':
          "import { readFileSync } from 'node:fs'\nexport const b = readFileSync.length",
      }),
    ).toStrictEqual([])
  })
})
